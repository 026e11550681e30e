// The mails a tenant may word itself (CONTRACT §20, Mail templates): every kind of mail the
// service sends, and the placeholders each kind fills. A kind that carries a code needs
// `{{code}}`, one that carries a link needs `{{link}}`; a template naming a placeholder its
// kind does not fill is refused, so a preview shows everything the mail will hold.

export const MAIL_KINDS = [
  'login_code',
  'email_otp',
  'email_verification',
  'password_reset',
  'invitation',
  'organization_invitation',
  'magic_link',
  'security_alert',
] as const
export type MailKind = (typeof MAIL_KINDS)[number]

/**
 * Every placeholder and what it holds. `event` goes beyond the contract's list, for the
 * security alert only: without it a tenant's alert could not say what happened.
 */
export const PLACEHOLDERS = {
  code: 'The 6-digit code.',
  link: 'The link the mail carries (the security alert: the account page).',
  'tenant.name': 'The workspace’s name.',
  'user.email': 'The recipient’s address.',
  expiresInMinutes: 'How long the code or link works, in minutes.',
  event: 'What happened, in the mail’s language (security alerts only).',
} as const
export type Placeholder = keyof typeof PLACEHOLDERS

/** The values a mail fills its template with (those its kind allows). */
export type TemplateValues = Partial<Record<Placeholder, string>>

interface KindPlaceholders {
  required: readonly Placeholder[]
  allowed: readonly Placeholder[]
}
const NAMES = ['tenant.name', 'user.email'] as const
const codeKind: KindPlaceholders = {
  required: ['code'],
  allowed: ['code', ...NAMES, 'expiresInMinutes'],
}
const linkKind: KindPlaceholders = {
  required: ['link'],
  allowed: ['link', ...NAMES, 'expiresInMinutes'],
}

export const KIND_PLACEHOLDERS: Record<MailKind, KindPlaceholders> = {
  login_code: codeKind,
  email_otp: codeKind,
  email_verification: codeKind,
  password_reset: codeKind,
  invitation: linkKind,
  organization_invitation: linkKind,
  magic_link: linkKind,
  security_alert: { required: [], allowed: ['event', 'link', ...NAMES] },
}

/** CONTRACT §20: a security alert's subject keeps this prefix whatever the template says. */
export const SECURITY_ALERT_PREFIX = 'Security alert: '
