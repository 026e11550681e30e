// Security notifications (CONTRACT §9): a mail to the user whose subject begins
// `Security alert:` when the way they sign in changes or a sign-in comes from a new
// device. The text names what happened and when, and links only to the account page: it
// carries no code and no link that signs in, so a forwarded or intercepted alert grants
// nothing. Tenant setting `securityNotifications` (default true) turns them off.
//
// Call it after the change committed: the mailer sends in the background, so an alert
// never delays or fails the request that caused it.
import type { Config } from '../../config.ts'
import type { Clock } from '../../lib/clock.ts'
import { escapeHtml, type Mail, type Mailer } from '../../lib/mailer.ts'
import { describeUserAgent } from '../../lib/user-agent.ts'
import type { Tenant } from '../tenants/tenant.ts'

/** What the alert is about, and its wording. */
export const SECURITY_EVENTS = {
  password_changed: ['your password was changed', 'The password of your account was changed.'],
  password_reset: [
    'your password was reset',
    'The password of your account was reset with a code sent to this address.',
  ],
  totp_enrolled: [
    'an authenticator app was added',
    'An authenticator app was set up as a second factor for your account.',
  ],
  totp_disabled: [
    'your authenticator app was removed',
    'The authenticator app of your account was removed; it no longer protects your sign-ins.',
  ],
  passkey_added: ['a passkey was added', 'A passkey was added to your account.'],
  passkey_removed: ['a passkey was removed', 'A passkey was removed from your account.'],
  recovery_code_used: [
    'a recovery code was used',
    'One of your recovery codes was used to sign in or to prove your second factor.',
  ],
  recovery_codes_regenerated: [
    'new recovery codes were made',
    'New recovery codes were made for your account; the previous ones no longer work.',
  ],
  new_device: [
    'a sign-in from a new device',
    'Your account was signed in to from a device or network it has not used recently.',
  ],
} as const satisfies Record<string, readonly [string, string]>

export type SecurityEvent = keyof typeof SECURITY_EVENTS

export interface SecurityAlert {
  event: SecurityEvent
  /** Shown to the user: where the change or sign-in came from, when known. */
  ip?: string | null
  userAgent?: string | null
  /** Extra lines, such as how many recovery codes are left. */
  notes?: string[]
}

// The parts of Deps it uses, named without deps.ts: the session service (which deps.ts
// names) sends sign-in alerts, and an import back would be a cycle.
type MailDeps = { clock: Clock; config: Pick<Config, 'publicUrl'> }
type AlertDeps = MailDeps & { mailer: Mailer }

/** Queues the alert mail unless the tenant turned alerts off. */
export function sendSecurityAlert(
  deps: AlertDeps,
  tenant: Pick<Tenant, 'name' | 'slug' | 'securityNotifications'>,
  user: { email: string },
  alert: SecurityAlert,
): void {
  if (!tenant.securityNotifications) return
  deps.mailer.deliver(securityAlertMail(deps, tenant, user.email, alert))
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

export function securityAlertMail(
  deps: MailDeps,
  tenant: Pick<Tenant, 'name' | 'slug'>,
  to: string,
  alert: SecurityAlert,
): Mail {
  const [headline, sentence] = SECURITY_EVENTS[alert.event]
  const name = tenant.name.replace(/[\r\n\t]+/g, ' ')
  const when = deps.clock.now().toUTCString()
  const lines = [
    `${sentence}`,
    '',
    `Workspace: ${name}`,
    `When: ${when}`,
    ...(alert.ip ? [`Network address: ${alert.ip}`] : []),
    // The family only ("Firefox on Windows"): a raw User-Agent may hold long digit runs.
    ...(alert.userAgent ? [`Browser: ${describeUserAgent(alert.userAgent)}`] : []),
    ...(alert.notes ?? []),
    '',
    'If this was you, there is nothing to do.',
    'If it was not, change your password and review your sessions and second factors on your account page:',
    accountPageUrl(deps.config, tenant.slug),
    '',
  ].filter((line) => !SIX_DIGITS.test(line))
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    ...lines.filter((l) => l !== '').map((l) => `<p>${escapeHtml(l)}</p>`),
    '</body></html>',
  ].join('')
  return { to, subject: `Security alert: ${headline} (${name})`, text: lines.join('\n'), html }
}
