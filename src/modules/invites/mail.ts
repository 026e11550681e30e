// The invitation mail (CONTRACT §5: invite mail holds the token). It names the tenant, so
// the invitee knows what they are joining, and the accept endpoint.
import type { Config } from '../../config.ts'
import { escapeHtml, type Mail } from '../../lib/mailer.ts'
import { isAdminRole } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import type { Invite } from './queries.ts'

export function inviteMail(config: Config, tenant: Tenant, invite: Invite, token: string): Mail {
  const as = isAdminRole(invite.role) ? 'an administrator' : 'a member'
  const until = invite.expiresAt.toISOString()
  const acceptUrl = `${config.publicUrl}/v1/invites/accept`
  // The hosted page that accepts it (src/web): a person opens this; a program uses the API.
  const pageUrl = `${config.publicUrl}/t/${tenant.slug}/invite?token=${encodeURIComponent(token)}`
  const text = [
    `You have been invited to join ${tenant.name} (${tenant.slug}) as ${as}.`,
    '',
    'Your invitation token:',
    '',
    token,
    '',
    `It is valid until ${until}. To accept, open this page and choose a password:`,
    '',
    pageUrl,
    '',
    `Or send a password with the token to ${acceptUrl}`,
    '(POST, JSON body { "token": "…", "password": "…" }).',
    '',
    'If you did not expect this invitation, ignore this message.',
  ].join('\n')
  const html = [
    `<p>You have been invited to join <strong>${escapeHtml(tenant.name)}</strong> (${escapeHtml(tenant.slug)}) as ${as}.</p>`,
    `<p>Your invitation token:</p><p><code>${escapeHtml(token)}</code></p>`,
    `<p>It is valid until ${until}. To accept, <a href="${escapeHtml(pageUrl)}">open the invitation page</a> and choose a password.</p>`,
    `<p>Or send a password with the token to <code>${escapeHtml(acceptUrl)}</code>.</p>`,
    '<p>If you did not expect this invitation, ignore this message.</p>',
  ].join('\n')
  return { to: invite.email, subject: `You are invited to ${tenant.name}`, text, html }
}
