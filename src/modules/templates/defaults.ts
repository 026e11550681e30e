// The default mail of each kind, drawn by its own builder with sample values, for the
// preview (CONTRACT §20: a preview without a draft or a saved template shows the default).
// A module that sends a new kind of mail adds its builder here beside its `kind` in
// kinds.ts; without one the preview of that kind's default is 404 (`hasDefault` false).
import type { Config } from '../../config.ts'
import { translator } from '../../i18n/index.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mail } from '../../lib/mailer.ts'
import { CODE_MAIL_KINDS, codeMail } from '../codes/mail.ts'
import { CODE_TTL_SECONDS, type CodePurpose } from '../codes/service.ts'
import { inviteMail } from '../invites/mail.ts'
import { accountPageUrl, securityAlertMail } from '../notifications/security.ts'
import { invitationMail } from '../organizations/mail.ts'
import { MAGIC_LINK_TTL_SECONDS, magicLinkMail, magicLinkUrl } from '../passwordless/magic-link.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { MailKind, TemplateValues } from './kinds.ts'

export interface SampleContext {
  config: Pick<Config, 'publicUrl'>
  clock: Clock
  /** The tenant, offering every locale: a preview is in the locale asked for. */
  tenant: Tenant
  locale: string
}

const SAMPLE_CODE = '123456'
const SAMPLE_EMAIL = 'user@example.com'
const SAMPLE_TOKEN = 'sample-token'
const INVITE_MINUTES = 7 * 24 * 60

/** The sample values of a kind's placeholders. */
export function sampleValues(kind: MailKind, ctx: SampleContext): TemplateValues {
  const { publicUrl } = ctx.config
  const base = `${publicUrl}/t/${ctx.tenant.slug}`
  const names = { 'tenant.name': ctx.tenant.name, 'user.email': SAMPLE_EMAIL }
  switch (kind) {
    case 'invitation':
      return {
        ...names,
        link: `${base}/invite?token=${SAMPLE_TOKEN}`,
        expiresInMinutes: String(INVITE_MINUTES),
      }
    case 'organization_invitation':
      return {
        ...names,
        link: `${base}/organization-invite?token=${SAMPLE_TOKEN}`,
        expiresInMinutes: String(INVITE_MINUTES),
      }
    case 'magic_link':
      return {
        ...names,
        link: magicLinkUrl(ctx.config, ctx.tenant.slug, SAMPLE_TOKEN),
        expiresInMinutes: String(MAGIC_LINK_TTL_SECONDS / 60),
      }
    case 'security_alert':
      return {
        ...names,
        event: translator(ctx.locale)('mail.alert.new_device.headline'),
        link: accountPageUrl(ctx.config, ctx.tenant.slug),
      }
    default:
      return { ...names, code: SAMPLE_CODE, expiresInMinutes: String(CODE_TTL_SECONDS / 60) }
  }
}

const codeDefault =
  (purpose: CodePurpose) =>
  (ctx: SampleContext): Mail =>
    codeMail(purpose, { to: SAMPLE_EMAIL, locale: ctx.locale }, ctx.tenant, SAMPLE_CODE)

const PURPOSE_OF = Object.fromEntries(
  Object.entries(CODE_MAIL_KINDS).map(([purpose, kind]) => [kind, purpose as CodePurpose]),
)

export const DEFAULT_MAILS: Partial<Record<MailKind, (ctx: SampleContext) => Mail>> = {
  ...Object.fromEntries(
    Object.entries(PURPOSE_OF).map(([kind, purpose]) => [kind, codeDefault(purpose)]),
  ),
  invitation: (ctx) => {
    const now = ctx.clock.now()
    const expiresAt = new Date(now.getTime() + INVITE_MINUTES * 60_000)
    const invite = { email: SAMPLE_EMAIL, role: MEMBER_ROLE, createdAt: now, expiresAt }
    return inviteMail(ctx.config, ctx.tenant, invite, SAMPLE_TOKEN, ctx.locale)
  },
  organization_invitation: (ctx) => {
    const now = ctx.clock.now()
    const expiresAt = new Date(now.getTime() + INVITE_MINUTES * 60_000)
    const invitation = { email: SAMPLE_EMAIL, createdAt: now, expiresAt }
    const organization = { name: 'Example organization' }
    return invitationMail(
      ctx.config,
      ctx.tenant,
      organization,
      invitation,
      SAMPLE_TOKEN,
      ctx.locale,
    )
  },
  magic_link: (ctx) =>
    magicLinkMail(
      ctx.tenant,
      { to: SAMPLE_EMAIL, locale: ctx.locale },
      magicLinkUrl(ctx.config, ctx.tenant.slug, SAMPLE_TOKEN),
    ),
  security_alert: (ctx) =>
    securityAlertMail(
      ctx,
      ctx.tenant,
      { email: SAMPLE_EMAIL, locale: ctx.locale },
      {
        event: 'new_device',
        ip: '203.0.113.7',
        userAgent: 'Mozilla/5.0 (Windows NT 10.0) Firefox/140.0',
      },
    ),
}
