// The tenant's CAPTCHA setting (CONTRACT §21) as PATCH tenant writes it and GET shows it.
// Stored in four columns of the tenant's row (provider, site key, sealed secret, actions);
// no provider means no CAPTCHA.
import type { FieldCipher } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import type { CaptchaAction, CaptchaProvider, CaptchaRecord, CaptchaSetting } from './schemas.ts'
import { CAPTCHA_ACTIONS } from './schemas.ts'
import { captchaSecretColumn } from './secret.ts'

/** The columns of the tenant's row that hold the setting. */
export interface CaptchaColumns {
  captchaProvider: string | null
  captchaSiteKey: string | null
  captchaSecretEnc: string | null
  captchaOn: string[] | null
  captchaMinScore: number | null
}

export interface Captcha {
  provider: CaptchaProvider
  siteKey: string | null
  secretEnc: string | null
  on: CaptchaAction[]
  /** reCAPTCHA only: the lowest v3 score let through; null for the other providers. */
  minScore: number | null
}

/** Google's suggested threshold for reCAPTCHA v3, where the tenant names none. */
export const DEFAULT_MIN_SCORE = 0.5

/** The tenant's CAPTCHA, or undefined when it has none. */
export function captchaOf(row: CaptchaColumns): Captcha | undefined {
  if (!row.captchaProvider) return undefined
  return {
    provider: row.captchaProvider as CaptchaProvider,
    siteKey: row.captchaSiteKey,
    secretEnc: row.captchaSecretEnc,
    on: (row.captchaOn ?? []) as CaptchaAction[],
    minScore:
      row.captchaProvider === 'recaptcha' ? (row.captchaMinScore ?? DEFAULT_MIN_SCORE) : null,
  }
}

/** Whether `action` of this tenant asks for a CAPTCHA. */
export function captchaFor(row: CaptchaColumns, action: CaptchaAction): Captcha | undefined {
  const captcha = captchaOf(row)
  return captcha?.on.includes(action) ? captcha : undefined
}

/** The record's `captcha`: never the secret, only whether one is stored. */
export function presentCaptcha(row: CaptchaColumns): CaptchaRecord {
  const captcha = captchaOf(row)
  if (!captcha) return null
  return {
    provider: captcha.provider,
    siteKey: captcha.siteKey,
    hasSecret: captcha.secretEnc !== null,
    on: captcha.on,
    ...(captcha.minScore === null ? {} : { minScore: captcha.minScore }),
  }
}

/** What auth/config tells any client: the provider, its public site key, the actions. */
export function publicCaptcha(row: CaptchaColumns) {
  const captcha = captchaOf(row)
  return captcha ? { provider: captcha.provider, siteKey: captcha.siteKey, on: captcha.on } : null
}

const invalid = (path: string, message: string): never =>
  fail('validation', { details: { issues: [{ path: `body.captcha.${path}`, message }] } })

/**
 * The columns a PATCH's `captcha` writes. A third-party provider needs its site key and a
 * secret: the one sent, or the one stored for the same provider (a secret is never moved
 * to another provider). ALTCHA needs neither and keeps none. `on` is stored in the
 * contract's order.
 */
export function captchaColumns(
  cipher: FieldCipher,
  tenantId: string,
  stored: CaptchaColumns,
  setting: CaptchaSetting,
): CaptchaColumns {
  if (setting === null) {
    return {
      captchaProvider: null,
      captchaSiteKey: null,
      captchaSecretEnc: null,
      captchaOn: null,
      captchaMinScore: null,
    }
  }
  const on = CAPTCHA_ACTIONS.filter((a) => setting.on.includes(a))
  if (setting.minScore !== undefined && setting.provider !== 'recaptcha') {
    invalid('minScore', 'only recaptcha scores its answers')
  }
  if (setting.provider === 'altcha') {
    if (setting.siteKey !== undefined) invalid('siteKey', 'altcha takes no siteKey')
    if (setting.secret !== undefined) invalid('secret', 'altcha takes no secret')
    return {
      captchaProvider: 'altcha',
      captchaSiteKey: null,
      captchaSecretEnc: null,
      captchaOn: on,
      captchaMinScore: null,
    }
  }
  if (setting.siteKey === undefined) invalid('siteKey', `${setting.provider} needs its siteKey`)
  const kept = stored.captchaProvider === setting.provider ? stored.captchaSecretEnc : null
  const secretEnc =
    setting.secret !== undefined
      ? captchaSecretColumn.seal(cipher, { tenantId, id: tenantId }, setting.secret)
      : kept
  if (secretEnc === null) invalid('secret', `${setting.provider} needs its secret`)
  return {
    captchaProvider: setting.provider,
    captchaSiteKey: setting.siteKey ?? null,
    captchaSecretEnc: secretEnc,
    captchaOn: on,
    // A PATCH without minScore keeps the stored one of the same provider.
    captchaMinScore:
      setting.provider !== 'recaptcha'
        ? null
        : (setting.minScore ??
          (stored.captchaProvider === 'recaptcha' ? stored.captchaMinScore : null)),
  }
}

/** The stored secret of a third-party provider, opened (undefined: none, or unreadable). */
export function openSecret(cipher: FieldCipher, tenantId: string, captcha: Captcha) {
  if (!captcha.secretEnc) return undefined
  return captchaSecretColumn.open(cipher, { tenantId, id: tenantId }, captcha.secretEnc)
}
