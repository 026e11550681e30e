// The API's refusals in plain words, next to the field they concern. A page never shows
// the JSON envelope: each reason maps to a sentence for a person (a catalogue key, said in
// the page's language, CONTRACT §20), and a 429 says when to try again.
import type { MessageKey, Translate } from '../i18n/index.ts'
import { REASONS as API_REASONS } from '../lib/errors.ts'
import { AuthServiceError } from './api.ts'
import type { FormErrors } from './layout.ts'

/** Where a reason's message goes (a field name, or the form) and what it says. */
const REASONS: Record<string, [string | undefined, MessageKey]> = {
  invalid_credentials: [undefined, 'errors.reason.invalid_credentials'],
  invalid_code: ['code', 'errors.reason.invalid_code'],
  invalid_mfa_code: ['totpCode', 'errors.reason.invalid_mfa_code'],
  password_too_weak: ['password', 'errors.reason.password_too_weak'],
  password_breached: ['password', 'errors.reason.password_breached'],
  captcha_required: [undefined, 'errors.reason.captcha_required'],
  captcha_invalid: [undefined, 'errors.reason.captcha_invalid'],
  email_taken: ['email', 'errors.reason.email_taken'],
  account_suspended: [undefined, 'errors.reason.account_suspended'],
  password_login_disabled: [undefined, 'errors.reason.password_login_disabled'],
  passwordless_disabled: [undefined, 'errors.reason.passwordless_disabled'],
  mfa_not_enrolled: [undefined, 'errors.reason.mfa_not_enrolled'],
  email_not_verified: [undefined, 'errors.reason.email_not_verified'],
  invalid_invite: [undefined, 'errors.reason.invalid_invite'],
  invite_expired: [undefined, 'errors.reason.invite_expired'],
  invite_email_mismatch: [undefined, 'errors.reason.invite_email_mismatch'],
  invite_used: [undefined, 'errors.reason.invite_used'],
  already_enrolled: [undefined, 'errors.reason.already_enrolled'],
  mfa_disabled: [undefined, 'errors.reason.mfa_disabled'],
  session_revoked: [undefined, 'errors.reason.session_revoked'],
  unavailable: [undefined, 'errors.reason.unavailable'],
  last_sign_in_method: [undefined, 'errors.reason.last_sign_in_method'],
  password_exists: [undefined, 'errors.reason.password_exists'],
  sso_required: [undefined, 'errors.reason.sso_required'],
}

const FIELD_WORDS: Record<string, MessageKey> = {
  email: 'errors.field.email',
  password: 'errors.field.password',
  newPassword: 'errors.field.newPassword',
  currentPassword: 'errors.field.currentPassword',
  code: 'errors.field.code',
  totpCode: 'errors.field.totpCode',
  emailOtpCode: 'errors.field.emailOtpCode',
  recoveryCode: 'errors.field.recoveryCode',
}

/** When to try again, in the page's words ("in 5 minutes"), from a Retry-After in seconds. */
export function inMinutes(seconds: number | undefined, t: Translate): string {
  if (!seconds || seconds <= 60) return t('errors.wait.minute')
  const minutes = Math.ceil(seconds / 60)
  return minutes >= 90
    ? t('errors.wait.hours', { hours: Math.round(minutes / 60) })
    : t('errors.wait.minutes', { minutes })
}

/**
 * The form errors for a failed API call, in the words of `t`; `fieldFor` renames an API
 * field to the form's (the second-factor form calls its one code field `code`, for example).
 */
export function formErrors(
  error: unknown,
  t: Translate,
  fieldFor: Record<string, string> = {},
): FormErrors {
  if (!(error instanceof AuthServiceError)) throw error
  const rename = (name: string) => fieldFor[name] ?? name
  if (error.status === 429) {
    return { form: t('errors.tooManyAttempts', { wait: inMinutes(error.retryAfter, t) }) }
  }
  if (error.reason === 'validation') {
    const fields: Record<string, string> = {}
    const issues = (error.details?.issues ?? []) as { path?: string; message?: string }[]
    for (const issue of issues) {
      const name = String(issue.path ?? '')
        .replace(/^body\.?/, '')
        .split('.')[0]
      if (name && !fields[rename(name)]) {
        // A length rule says its number ("Use at least 12 characters.").
        const shorter = /fewer than (\d+) characters/.exec(issue.message ?? '')
        const words = FIELD_WORDS[name]
        fields[rename(name)] = shorter
          ? t('errors.field.atLeast', { count: Number(shorter[1]) })
          : t(words ?? 'errors.field.check')
      }
    }
    return Object.keys(fields).length > 0 ? { fields } : { form: t('layout.formErrors') }
  }
  // CONTRACT §21: a hook's deny is shown in the hook's own words (at most 200 characters,
  // escaped like any text); without words of its own the message is the API's English
  // default, and the page says its own sentence instead.
  if (
    error.reason === 'hook_denied' &&
    error.message.length > 0 &&
    error.message !== API_REASONS.hook_denied[1]
  ) {
    return { form: error.message }
  }
  const known = error.reason ? REASONS[error.reason] : undefined
  if (known) {
    const [name, key] = known
    const message = t(key)
    return name ? { fields: { [rename(name)]: message } } : { form: message }
  }
  if (error.status >= 500) return { form: t('errors.reason.server') }
  // A refusal the pages have no sentence for: the API's `message` is English by design
  // (CONTRACT §20, for programs), so the page says a sentence of its own language.
  return { form: t('errors.reason.other') }
}
