// Security notifications (CONTRACT §9): a mail to the user whose subject begins
// `Security alert:` when the way they sign in changes or a sign-in comes from a new
// device. The text names what happened and when, and links only to the account page: it
// carries no code and no link that signs in, so a forwarded or intercepted alert grants
// nothing. Tenant setting `securityNotifications` (default true) turns them off.
//
// Call it after the change committed: the mailer sends in the background, so an alert
// never delays or fails the request that caused it.
import type { Config } from '../../config.ts'
import { browserName } from '../../i18n/format.ts'
import type { MessageKey, MessageValues } from '../../i18n/index.ts'
import { mailDate, mailTranslator } from '../../i18n/mail.ts'
import type { Clock } from '../../lib/clock.ts'
import { escapeHtml, type Mail, type Mailer } from '../../lib/mailer.ts'
import { SECURITY_ALERT_PREFIX } from '../templates/kinds.ts'
import { withTenantTemplate } from '../templates/seam.ts'
import type { Tenant } from '../tenants/tenant.ts'

/**
 * What the alert is about, and its wording (CONTRACT §20: catalogue keys, the headline and
 * the sentence in the mail's language; the subject's `Security alert:` prefix stays English
 * in every language, mail filters rely on it).
 */
export const SECURITY_EVENTS = {
  password_changed: [
    'mail.alert.password_changed.headline',
    'mail.alert.password_changed.sentence',
  ],
  password_reset: ['mail.alert.password_reset.headline', 'mail.alert.password_reset.sentence'],
  password_set: ['mail.alert.password_set.headline', 'mail.alert.password_set.sentence'],
  totp_enrolled: ['mail.alert.totp_enrolled.headline', 'mail.alert.totp_enrolled.sentence'],
  totp_disabled: ['mail.alert.totp_disabled.headline', 'mail.alert.totp_disabled.sentence'],
  passkey_added: ['mail.alert.passkey_added.headline', 'mail.alert.passkey_added.sentence'],
  passkey_removed: ['mail.alert.passkey_removed.headline', 'mail.alert.passkey_removed.sentence'],
  recovery_code_used: [
    'mail.alert.recovery_code_used.headline',
    'mail.alert.recovery_code_used.sentence',
  ],
  recovery_codes_regenerated: [
    'mail.alert.recovery_codes_regenerated.headline',
    'mail.alert.recovery_codes_regenerated.sentence',
  ],
  new_device: ['mail.alert.new_device.headline', 'mail.alert.new_device.sentence'],
} as const satisfies Record<string, readonly [MessageKey, MessageKey]>

export type SecurityEvent = keyof typeof SECURITY_EVENTS

export interface SecurityAlert {
  event: SecurityEvent
  /** Shown to the user: where the change or sign-in came from, when known. */
  ip?: string | null
  userAgent?: string | null
  /** Extra lines, such as how many recovery codes are left (catalogue keys). */
  notes?: { key: MessageKey; values?: MessageValues }[]
  /** The request's Accept-Language, for a user without a `locale` (CONTRACT §20). */
  language?: string | null
}

// The parts of Deps it uses, named without deps.ts: the session service (which deps.ts
// names) sends sign-in alerts, and an import back would be a cycle.
type MailDeps = { clock: Clock; config: Pick<Config, 'publicUrl'> }
type AlertDeps = MailDeps & { mailer: Mailer }

/** Queues the alert mail unless the tenant turned alerts off. */
export function sendSecurityAlert(
  deps: AlertDeps,
  tenant: AlertTenant & Pick<Tenant, 'securityNotifications'>,
  user: { email: string; locale?: string | null },
  alert: SecurityAlert,
): void {
  if (!tenant.securityNotifications) return
  deps.mailer.deliver(securityAlertMail(deps, tenant, user, alert))
}

/** The account page of the hosted pages: a plain link, it signs nobody in. */
export function accountPageUrl(config: Pick<Config, 'publicUrl'>, slug: string): string {
  return `${config.publicUrl}/t/${slug}/account`
}

/**
 * CONTRACT §9: an alert's text holds no 6-digit number, so it can never be mistaken for (or
 * pass for) a mail carrying a code. Only the tenant's name or slug can bring one (the
 * sentences, the date and an IP address cannot), so a line holding one is left out.
 */
const SIX_DIGITS = /\d{6}/

type AlertTenant = Pick<Tenant, 'id' | 'name' | 'slug' | 'locales' | 'defaultLocale'>

export function securityAlertMail(
  deps: MailDeps,
  tenant: AlertTenant,
  user: { email: string; locale?: string | null },
  alert: SecurityAlert,
): Mail {
  const to = user.email
  const { t, locale } = mailTranslator(tenant, user.locale, alert.language)
  const [headlineKey, sentenceKey] = SECURITY_EVENTS[alert.event]
  const headline = t(headlineKey)
  const name = tenant.name.replace(/[\r\n\t]+/g, ' ')
  const when = mailDate(locale, deps.clock.now())
  const account = accountPageUrl(deps.config, tenant.slug)
  const lines = [
    t(sentenceKey),
    '',
    t('mail.alert.workspace', { name }),
    t('mail.alert.when', { when }),
    ...(alert.ip ? [t('mail.alert.ip', { ip: alert.ip })] : []),
    // The family only ("Firefox on Windows"): a raw User-Agent may hold long digit runs.
    ...(alert.userAgent
      ? [t('mail.alert.browser', { browser: browserName(t, alert.userAgent) })]
      : []),
    ...(alert.notes ?? []).map((note) => t(note.key, note.values)),
    '',
    t('mail.alert.wasYou'),
    t('mail.alert.notYou'),
    account,
    '',
  ].filter((line) => !SIX_DIGITS.test(line))
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...lines.filter((l) => l !== '').map((l) => `<p>${escapeHtml(l)}</p>`),
    '</body></html>',
  ].join('')
  const subject = `${SECURITY_ALERT_PREFIX}${headline} (${name})`
  // A tenant's own alert template in this language replaces the wording, its subject still
  // behind the prefix (templates/render.ts); `event` is the headline.
  return withTenantTemplate(
    { to, subject, text: lines.join('\n'), html },
    {
      tenantId: tenant.id,
      kind: 'security_alert',
      locale,
      values: { event: headline, link: account, 'tenant.name': tenant.name, 'user.email': to },
    },
  )
}
