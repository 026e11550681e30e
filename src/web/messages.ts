// The API's refusals in plain words, next to the field they concern. A page never shows
// the JSON envelope: each reason maps to a sentence for a person, and a 429 says when to
// try again.
import { AuthServiceError } from './api.ts'
import type { FormErrors } from './layout.ts'

/** Where a reason's message goes (a field name, or the form) and what it says. */
const REASONS: Record<string, [string | undefined, string]> = {
  invalid_credentials: [undefined, 'The email address or password is not right.'],
  invalid_code: ['code', 'That code is wrong or has expired. Ask for a new one if needed.'],
  invalid_mfa_code: ['totpCode', 'That code is wrong or has already been used.'],
  password_too_weak: [
    'password',
    'This password is too common or too easy to guess. Try a longer phrase.',
  ],
  password_breached: [
    'password',
    'This password appears in a known data breach. Choose another one.',
  ],
  captcha_required: [undefined, 'Complete the check that you are not a robot, then try again.'],
  captcha_invalid: [
    undefined,
    'The check that you are not a robot did not pass or has expired. Please do it again.',
  ],
  email_taken: ['email', 'An account with this email address already exists. Sign in instead.'],
  account_suspended: [
    undefined,
    'This account is suspended. Ask an administrator of this workspace.',
  ],
  password_login_disabled: [
    undefined,
    'This workspace does not use passwords. Sign in with an emailed code.',
  ],
  passwordless_disabled: [
    undefined,
    'This workspace does not send sign-in codes. Use your password.',
  ],
  mfa_not_enrolled: [
    undefined,
    'This workspace needs an authenticator app. Set one up to continue.',
  ],
  email_not_verified: [undefined, 'Verify your email address first: ask for a code below.'],
  invalid_invite: [undefined, 'This invitation link is not valid. Ask for a new invitation.'],
  invite_expired: [undefined, 'This invitation has expired. Ask for a new invitation.'],
  invite_email_mismatch: [
    undefined,
    'This invitation is for another email address. Sign in with the invited address.',
  ],
  invite_used: [undefined, 'This invitation was already accepted. Sign in instead.'],
  already_enrolled: [undefined, 'An authenticator app is already set up.'],
  mfa_disabled: [undefined, 'This workspace does not use a second factor.'],
  session_revoked: [undefined, 'Your session has ended. Please sign in again.'],
  unavailable: [undefined, 'The service is busy. Please try again in a moment.'],
}

const FIELD_WORDS: Record<string, string> = {
  email: 'Enter an email address, like name@example.com.',
  password: 'Enter a password.',
  newPassword: 'Enter a new password.',
  currentPassword: 'Enter your current password.',
  code: 'Enter the 6-digit code.',
  totpCode: 'Enter the 6-digit code from your authenticator app.',
  emailOtpCode: 'Enter the 6-digit code we emailed you.',
  recoveryCode: 'Enter a recovery code, like abcde-fghij.',
}

export function inMinutes(seconds: number | undefined): string {
  if (!seconds || seconds <= 60) return 'in a minute'
  const minutes = Math.ceil(seconds / 60)
  return minutes >= 90 ? `in about ${Math.round(minutes / 60)} hours` : `in ${minutes} minutes`
}

/**
 * The form errors for a failed API call; `fieldFor` renames an API field to the form's
 * (the second-factor form calls its one code field `code`, for example).
 */
export function formErrors(error: unknown, fieldFor: Record<string, string> = {}): FormErrors {
  if (!(error instanceof AuthServiceError)) throw error
  const rename = (name: string) => fieldFor[name] ?? name
  if (error.status === 429) {
    return { form: `Too many attempts. Please try again ${inMinutes(error.retryAfter)}.` }
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
        fields[rename(name)] = shorter
          ? `Use at least ${shorter[1]} characters.`
          : (FIELD_WORDS[name] ?? 'Check this value.')
      }
    }
    return Object.keys(fields).length > 0 ? { fields } : { form: 'Please check the form.' }
  }
  const known = error.reason ? REASONS[error.reason] : undefined
  if (known) {
    const [name, message] = known
    return name ? { fields: { [rename(name)]: message } } : { form: message }
  }
  if (error.status >= 500) return { form: 'Something went wrong on our side. Please try again.' }
  return { form: error.message }
}
