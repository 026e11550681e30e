// Enforced SSO (CONTRACT §12): an address whose domain belongs to an enabled connection with
// `enforce` signs in through that connection only. Password, emailed-code and passkey
// sign-ins of its users answer 403 sso_required (the sign-in pipeline asks here, after the
// first factor proved who the user is), and request-login-code mails nothing. A tenant
// Admin is excepted, so an IdP outage cannot lock the tenant out.
import type { Handle } from '../../db/client.ts'
import { isAdminRole } from '../roles/permissions.ts'
import { emailDomain } from './domains.ts'
import { findConnectionByDomain, type SsoConnection } from './queries.ts'

/** The enabled, enforcing connection that owns `email`'s domain, if any. */
export async function enforcingConnection(
  db: Handle,
  tenantId: string,
  email: string,
): Promise<SsoConnection | undefined> {
  const domain = emailDomain(email)
  if (!domain) return undefined
  const connection = await findConnectionByDomain(db, tenantId, domain)
  return connection?.enabled && connection.enforce ? connection : undefined
}

/** Whether a sign-in of this user (or of an unknown address) must go through SSO. */
export async function ssoRequired(
  db: Handle,
  tenantId: string,
  email: string,
  user: { role: string } | undefined,
): Promise<boolean> {
  if (user && isAdminRole(user.role)) return false
  return (await enforcingConnection(db, tenantId, email)) !== undefined
}
