// The console's own sign-in under a workspace's CAPTCHA (CONTRACT §21): where auth/config
// says password sign-in asks for one and the provider is ALTCHA, the console solves a
// challenge of GET captcha/challenge in the browser (altcha-lib, WebCrypto's PBKDF2) and
// sends the answer as `captchaToken`, once per login call; a third-party provider's widget
// it cannot show (its CSP stays 'self'), and says so.
import { solveChallenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/web/pbkdf2'

export class CaptchaUnsupported extends Error {}

/** An answer for a login of this workspace, or undefined where it asks for none. */
export async function signInCaptcha(slug: string): Promise<string | undefined> {
  const base = `${window.location.origin}/v1/${encodeURIComponent(slug)}`
  const config = await fetch(`${base}/auth/config`)
  if (!config.ok) return undefined
  const { captcha } = (await config.json()) as {
    captcha?: { provider: string; on: string[] } | null
  }
  if (!captcha?.on.includes('sign_in')) return undefined
  if (captcha.provider !== 'altcha') {
    throw new CaptchaUnsupported(
      'This workspace asks for a CAPTCHA at sign-in that the console cannot show. Change the CAPTCHA with an API key, or take password sign-in out of it.',
    )
  }
  const challenge = await (await fetch(`${base}/captcha/challenge`)).json()
  const solution = await solveChallenge({ challenge, deriveKey })
  if (!solution) return undefined
  return btoa(JSON.stringify({ challenge, solution }))
}
