// The third-party CAPTCHAs (CONTRACT §21): Cloudflare Turnstile, hCaptcha and reCAPTCHA
// answer a token at their siteverify endpoint (form POST of `secret`, `response` and
// `remoteip`, a JSON `{success}` back; the three speak the same protocol). The endpoint is
// the provider's unless CAPTCHA_VERIFY_URL_{PROVIDER} names another; the call goes
// through the egress guard (CONTRACT §13) within VERIFY_TIMEOUT_MS. A timeout, a non-2xx,
// an answer that is not JSON or a `success` other than true: not verified. Turnstile and
// hCaptcha refuse a token seen before themselves (`timeout-or-duplicate`), so single use
// is theirs. reCAPTCHA v3 answers every token with `success` and a score: such an answer
// passes only with the tenant's minScore or more and the action the call guards (a v3
// token made for another action, or a bot's low score, is not verified).
import type { Config } from '../../config.ts'
import { egressFetch } from '../../lib/egress.ts'
import type { CaptchaProvider } from './schemas.ts'

export type ThirdParty = Exclude<CaptchaProvider, 'altcha'>

export const SITEVERIFY: Record<ThirdParty, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
  recaptcha: 'https://www.google.com/recaptcha/api/siteverify',
}

export const VERIFY_TIMEOUT_MS = 5000

export interface VerifyLog {
  warn(details: object, message: string): void
}

export async function verifyAtProvider(
  config: Pick<Config, 'captchaVerifyUrls' | 'webhookAllowPrivate'>,
  log: VerifyLog,
  captcha: {
    provider: ThirdParty
    secret: string
    siteKey: string | null
    minScore: number | null
    action: string
  },
  token: string,
  remoteIp: string,
): Promise<boolean> {
  const url = config.captchaVerifyUrls[captcha.provider] ?? SITEVERIFY[captcha.provider]
  const fetch = egressFetch({
    allowPrivate: config.webhookAllowPrivate,
    timeoutMs: VERIFY_TIMEOUT_MS,
    maxBytes: 16 * 1024,
  })
  const form = new URLSearchParams({ secret: captcha.secret, response: token })
  if (remoteIp) form.set('remoteip', remoteIp)
  // hCaptcha checks that the token was issued for this site key when told it.
  if (captcha.provider === 'hcaptcha' && captcha.siteKey) form.set('sitekey', captcha.siteKey)
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form,
    })
    if (!response.ok) {
      log.warn(
        { provider: captcha.provider, status: response.status },
        'captcha siteverify refused',
      )
      return false
    }
    const answer = (await response.json()) as {
      success?: unknown
      score?: unknown
      action?: unknown
    }
    if (answer?.success !== true) return false
    if (captcha.provider !== 'recaptcha' || answer.score === undefined) return true
    const scored =
      typeof answer.score === 'number' &&
      answer.score >= (captcha.minScore ?? 0) &&
      answer.action === captcha.action
    if (!scored) {
      log.warn(
        { provider: captcha.provider, score: answer.score, action: answer.action },
        'captcha score or action refused',
      )
    }
    return scored
  } catch (error) {
    log.warn(
      { provider: captcha.provider, err: error instanceof Error ? error.message : String(error) },
      'captcha siteverify failed',
    )
    return false
  }
}
