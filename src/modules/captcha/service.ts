// The CAPTCHA check of an action (CONTRACT §21): where the tenant's `captcha.on` holds it,
// the request's `captchaToken` must be a good answer of the tenant's provider; missing:
// 400 `captcha_required`, anything else: 400 `captcha_invalid`. The guard (guard.ts) runs
// it after the body was validated and the per-address budget took its point, before the
// handler does any work (a password hash, a lookup, a mail).
import type { Config } from '../../config.ts'
import type { Clock } from '../../lib/clock.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import type { SpentOnce } from '../../lib/spent-once.ts'
import { verifyAltcha } from './altcha.ts'
import type { CaptchaAction } from './schemas.ts'
import { type CaptchaColumns, captchaFor, openSecret } from './settings.ts'
import { type VerifyLog, verifyAtProvider } from './siteverify.ts'

export interface CaptchaDeps {
  config: Pick<Config, 'encryptionKeys' | 'captchaVerifyUrls' | 'webhookAllowPrivate'>
  clock: Clock
  cipher: FieldCipher
  spentCaptchas: SpentOnce
}

export async function checkCaptcha(
  deps: CaptchaDeps,
  log: VerifyLog,
  tenant: CaptchaColumns & { id: string },
  action: CaptchaAction,
  token: string | undefined,
  remoteIp: string,
): Promise<void> {
  const captcha = captchaFor(tenant, action)
  if (!captcha) return
  if (!token) fail('captcha_required')
  let verified: boolean
  if (captcha.provider === 'altcha') {
    verified = await verifyAltcha(deps, tenant.id, token)
  } else {
    const secret = openSecret(deps.cipher, tenant.id, captcha)
    if (secret === undefined) log.warn({ tenantId: tenant.id }, 'captcha secret unreadable')
    verified =
      secret !== undefined &&
      (await verifyAtProvider(
        deps.config,
        log,
        {
          provider: captcha.provider,
          secret,
          siteKey: captcha.siteKey,
          minScore: captcha.minScore,
          action,
        },
        token,
        remoteIp,
      ))
  }
  if (!verified) fail('captcha_invalid')
}
