// The messages that carry codes. CONTRACT §5: one message per code, whose text part holds
// the 6-digit code as a standalone number; every message names the tenant. The code comes
// first, before the tenant name, so that digits in a name can never be mistaken for it.
// CONTRACT §20: worded from the catalogues in the mail's language (i18n/mail.ts).
import type { MessageKey } from '../../i18n/index.ts'
import { type MailTenant, mailTranslator } from '../../i18n/mail.ts'
import type { Mail } from '../../lib/mailer.ts'
import { escapeHtml } from '../../lib/mailer.ts'
import type { MailKind } from '../templates/kinds.ts'
import { withTenantTemplate } from '../templates/seam.ts'
import { CODE_TTL_SECONDS, type CodePurpose } from './service.ts'

const MINUTES = CODE_TTL_SECONDS / 60

const WORDING = {
  login: ['mail.login.subject', 'mail.login.purpose', 'mail.login.ignore'],
  mfa: ['mail.mfa.subject', 'mail.mfa.purpose', 'mail.mfa.ignore'],
  reset: ['mail.reset.subject', 'mail.reset.purpose', 'mail.reset.ignore'],
  verify: ['mail.verify.subject', 'mail.verify.purpose', 'mail.verify.ignore'],
} as const satisfies Record<CodePurpose, readonly [MessageKey, MessageKey, MessageKey]>

/** The template kind of each purpose (CONTRACT §20, Mail templates). */
export const CODE_MAIL_KINDS = {
  login: 'login_code',
  mfa: 'email_otp',
  reset: 'password_reset',
  verify: 'email_verification',
} as const satisfies Record<CodePurpose, MailKind>

/** Who a code mail is for: the address, and the language to write it in. */
export interface CodeRecipient {
  to: string
  /** The recipient's `locale`, when known. */
  locale?: string | null
  /** The request's Accept-Language (the requesting page's locale). */
  requestLanguage?: string | null
}

export function codeMail(
  kind: keyof typeof WORDING,
  recipient: CodeRecipient,
  tenant: MailTenant & { id: string; name: string },
  code: string,
): Mail {
  const [subjectKey, purposeKey, ignoreKey] = WORDING[kind]
  const { t, locale } = mailTranslator(tenant, recipient.locale, recipient.requestLanguage)
  // A header must stay on one line whatever the tenant was named.
  const subject = t(subjectKey, { tenant: tenant.name.replace(/[\r\n\t]+/g, ' ') })
  const purpose = t(purposeKey, { tenant: tenant.name })
  const ignore = t(ignoreKey)
  const validity = t('mail.code.validity', { minutes: MINUTES })
  const label = t('mail.code.label')
  const text = [`${label} ${code}`, '', `${purpose} ${validity}`, '', ignore, ''].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>${escapeHtml(label)}</p><p style="font-size:28px;letter-spacing:4px"><strong>${code}</strong></p>`,
    `<p>${escapeHtml(purpose)} ${escapeHtml(validity)}</p>`,
    `<p style="color:#666">${escapeHtml(ignore)}</p>`,
    '</body></html>',
  ].join('')
  // A tenant's own template for this kind and language replaces the wording (CONTRACT §20).
  return withTenantTemplate(
    { to: recipient.to, subject, text, html },
    {
      tenantId: tenant.id,
      kind: CODE_MAIL_KINDS[kind],
      locale,
      values: {
        code,
        'tenant.name': tenant.name,
        'user.email': recipient.to,
        expiresInMinutes: String(MINUTES),
      },
    },
  )
}
