// The invitation to an organization (CONTRACT §18: the mail says which organization
// invites). Worded from the catalogues (CONTRACT §20); the invitee may have no account, so
// the language is the inviter's request's, else the tenant's default (i18n/mail.ts).
import type { Config } from '../../config.ts'
import { mailDate, mailTranslator } from '../../i18n/mail.ts'
import { escapeHtml, type Mail } from '../../lib/mailer.ts'
import { withTenantTemplate } from '../templates/seam.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { Invitation, Organization } from './queries.ts'

const oneLine = (text: string) => text.replace(/[\r\n\t]+/g, ' ')

export function invitationMail(
  config: Pick<Config, 'publicUrl'>,
  tenant: Tenant,
  organization: Pick<Organization, 'name'>,
  invitation: Pick<Invitation, 'email' | 'createdAt' | 'expiresAt'>,
  token: string,
  requestLanguage?: string | null,
): Mail {
  const { t, locale } = mailTranslator(tenant, null, requestLanguage)
  const until = mailDate(locale, invitation.expiresAt)
  const names = { organization: oneLine(organization.name), tenant: tenant.name, slug: tenant.slug }
  const acceptUrl = `${config.publicUrl}/v1/${tenant.slug}/organization-invitations/accept`
  // The hosted page that accepts it (src/web): a person opens this; a program uses the API.
  const pageUrl = `${config.publicUrl}/t/${tenant.slug}/organization-invite?token=${encodeURIComponent(token)}`
  const intro = t('mail.orgInvite.intro', names)
  const text = [
    intro,
    '',
    t('mail.invite.tokenLabel'),
    '',
    token,
    '',
    t('mail.orgInvite.valid', { until }),
    '',
    pageUrl,
    '',
    t('mail.orgInvite.api', { url: acceptUrl }),
    '',
    t('mail.invite.ignore'),
  ].join('\n')
  const html = [
    `<p>${escapeHtml(intro)}</p>`,
    `<p>${escapeHtml(t('mail.invite.tokenLabel'))}</p><p><code>${escapeHtml(token)}</code></p>`,
    `<p>${escapeHtml(t('mail.orgInvite.valid', { until }))}</p>`,
    `<p><a href="${escapeHtml(pageUrl)}">${escapeHtml(t('mail.orgInvite.openPage', names))}</a></p>`,
    `<p>${escapeHtml(t('mail.orgInvite.api', { url: acceptUrl }))}</p>`,
    `<p>${escapeHtml(t('mail.invite.ignore'))}</p>`,
  ].join('\n')
  const subject = oneLine(t('mail.orgInvite.subject', names))
  // A tenant's own template for organization invitations in this language replaces the
  // wording (CONTRACT §20, templates/seam.ts).
  const minutes = Math.round(
    (invitation.expiresAt.getTime() - invitation.createdAt.getTime()) / 60_000,
  )
  return withTenantTemplate(
    { to: invitation.email, subject, text, html },
    {
      tenantId: tenant.id,
      kind: 'organization_invitation',
      locale,
      values: {
        link: pageUrl,
        'tenant.name': tenant.name,
        'user.email': invitation.email,
        expiresInMinutes: String(minutes),
      },
    },
  )
}
