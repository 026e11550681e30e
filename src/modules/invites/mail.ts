// The invitation mail (CONTRACT §5: invite mail holds the token). It names the tenant, so
// the invitee knows what they are joining, and the accept endpoint. CONTRACT §20: worded
// from the catalogues; the invitee has no `locale` yet, so the language is the requesting
// page's (the inviter's request), else the tenant's default (i18n/mail.ts).
import type { Config } from '../../config.ts'
import { mailDate, mailTranslator } from '../../i18n/mail.ts'
import { escapeHtml, type Mail } from '../../lib/mailer.ts'
import { isAdminRole } from '../roles/permissions.ts'
import { withTenantTemplate } from '../templates/seam.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { Invite } from './queries.ts'

const API_EXAMPLE = '{ "token": "…", "password": "…" }'

export function inviteMail(
  config: Pick<Config, 'publicUrl'>,
  tenant: Tenant,
  invite: Pick<Invite, 'email' | 'role' | 'createdAt' | 'expiresAt'>,
  token: string,
  requestLanguage?: string | null,
): Mail {
  const { t, locale } = mailTranslator(tenant, null, requestLanguage)
  const role = isAdminRole(invite.role) ? 'admin' : 'member'
  const until = mailDate(locale, invite.expiresAt)
  const acceptUrl = `${config.publicUrl}/v1/invites/accept`
  // The hosted page that accepts it (src/web): a person opens this; a program uses the API.
  const pageUrl = `${config.publicUrl}/t/${tenant.slug}/invite?token=${encodeURIComponent(token)}`
  const intro = (name: string, slug: string) => t('mail.invite.intro', { tenant: name, slug, role })
  const text = [
    intro(tenant.name, tenant.slug),
    '',
    t('mail.invite.tokenLabel'),
    '',
    token,
    '',
    t('mail.invite.valid', { until }),
    '',
    pageUrl,
    '',
    t('mail.invite.api', { url: acceptUrl }),
    t('mail.invite.apiBody', { example: API_EXAMPLE }),
    '',
    t('mail.invite.ignore'),
  ].join('\n')
  const html = [
    `<p>${escapeHtml(intro(tenant.name, tenant.slug))}</p>`,
    `<p>${escapeHtml(t('mail.invite.tokenLabel'))}</p><p><code>${escapeHtml(token)}</code></p>`,
    `<p>${escapeHtml(t('mail.invite.valid', { until }))}</p>`,
    `<p><a href="${escapeHtml(pageUrl)}">${escapeHtml(t('mail.invite.openPage'))}</a></p>`,
    `<p>${escapeHtml(t('mail.invite.api', { url: acceptUrl }))}</p>`,
    `<p>${escapeHtml(t('mail.invite.ignore'))}</p>`,
  ].join('\n')
  const subject = t('mail.invite.subject', { tenant: tenant.name.replace(/[\r\n\t]+/g, ' ') })
  // A tenant's own template for invitations in this language replaces the wording (§20).
  const minutes = Math.round((invite.expiresAt.getTime() - invite.createdAt.getTime()) / 60_000)
  return withTenantTemplate(
    { to: invite.email, subject, text, html },
    {
      tenantId: tenant.id,
      kind: 'invitation',
      locale,
      values: {
        link: pageUrl,
        'tenant.name': tenant.name,
        'user.email': invite.email,
        expiresInMinutes: String(minutes),
      },
    },
  )
}
