// The messages that carry codes. CONTRACT §5: one message per code, whose text part holds
// the 6-digit code as a standalone number; every message names the tenant. The code comes
// first, before the tenant name, so that digits in a name can never be mistaken for it.
import type { Mail } from '../../lib/mailer.ts'
import { escapeHtml } from '../../lib/mailer.ts'
import { CODE_TTL_SECONDS, type CodePurpose } from './service.ts'

const MINUTES = CODE_TTL_SECONDS / 60

const WORDING = {
  login: {
    subject: (tenant: string) => `Your sign-in code for ${tenant}`,
    purpose: (tenant: string) => `Enter it to sign in to ${tenant}.`,
    ignore: 'If you did not ask for it, you can ignore this message.',
  },
  mfa: {
    subject: (tenant: string) => `Your verification code for ${tenant}`,
    purpose: (tenant: string) => `Enter it to finish signing in to ${tenant}.`,
    ignore:
      'If you did not just sign in, someone else may know your password: change it as soon as you can.',
  },
  reset: {
    subject: (tenant: string) => `Your password reset code for ${tenant}`,
    purpose: (tenant: string) =>
      `Enter it to choose a new password for ${tenant}; every other session will be signed out.`,
    ignore: 'If you did not ask for it, you can ignore this message: your password is unchanged.',
  },
  verify: {
    subject: (tenant: string) => `Confirm your email address for ${tenant}`,
    purpose: (tenant: string) => `Enter it to confirm your email address for ${tenant}.`,
    ignore: 'If you did not create an account, you can ignore this message.',
  },
} as const satisfies Record<CodePurpose, unknown>

export function codeMail(kind: keyof typeof WORDING, to: string, tenantName: string, code: string) {
  const w = WORDING[kind]
  // A header must stay on one line whatever the tenant was named.
  const subject = w.subject(tenantName.replace(/[\r\n\t]+/g, ' '))
  const validity = `The code expires in ${MINUTES} minutes and works once.`
  const text = [
    `Your code: ${code}`,
    '',
    `${w.purpose(tenantName)} ${validity}`,
    '',
    w.ignore,
    '',
  ].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>Your code:</p><p style="font-size:28px;letter-spacing:4px"><strong>${code}</strong></p>`,
    `<p>${escapeHtml(w.purpose(tenantName))} ${validity}</p>`,
    `<p style="color:#666">${escapeHtml(w.ignore)}</p>`,
    '</body></html>',
  ].join('')
  return { to, subject, text, html } satisfies Mail
}
