// The credential guard (issue 36 F1, README "Security"): what a machine path may change
// about how an existing user signs in. A machine credential (an API key, so SCIM too) acts
// as the tenant's admin (CONTRACT §4) but is refused the routes that mint Admins or keys;
// were it able to set an Admin's password or address, it could sign in as that Admin and
// take those rights anyway. So, on every machine path (SCIM PUT/PATCH, import's
// onConflict update):
//   - the password and the primary address of a user who holds more than a key may grant
//     (any role but Member: the Admin today, any role with permissions once roles exist)
//     are never set or replaced;
//   - nor is the password of a user who holds a second factor (TOTP or a passkey): a
//     password set over it would sign in where the second factor is not asked (mfaPolicy
//     Disabled, or a passkey-only user who never had a password).
// Import applies the rule to every caller (an import update never touches an Admin's
// password, whoever sends it); SCIM takes only API keys. Refused: 403 credential_protected.
import type { Handle } from '../../db/client.ts'
import type { Actor } from '../audit/recorder.ts'
import { passkeyHolders } from '../passkeys/service.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'

/** The role a machine credential may grant (CONTRACT §4: keys cannot grant Admin). */
const KEY_GRANTABLE_ROLE = MEMBER_ROLE

/** What the guard reads of a user. */
export interface CredentialHolder {
  id: string
  role: string
  totpEnabled: boolean
}

export type CredentialChange = 'password' | 'email'

/** Why the change is refused, as the detail of 403 credential_protected. */
export type Refusal = string

/** Whether `actor` is a machine credential (an API key; SCIM authenticates with one). */
export const isMachine = (actor: Actor) => actor.type === 'apiKey'

/**
 * A checker for changes to `users` (loaded in one query for a batch): answers the refusal's
 * detail, or undefined when the change may go ahead.
 */
export async function credentialGuard(
  db: Handle,
  tenantId: string,
  users: CredentialHolder[],
): Promise<(user: CredentialHolder, change: CredentialChange) => Refusal | undefined> {
  // Passkeys are read only for the users whose role leaves the question open.
  const open = users.filter((u) => u.role === KEY_GRANTABLE_ROLE && !u.totpEnabled)
  const withPasskey = await passkeyHolders(
    db,
    tenantId,
    open.map((u) => u.id),
  )
  return (user, change) => {
    if (user.role !== KEY_GRANTABLE_ROLE) {
      return change === 'password'
        ? `The password of a user with the ${user.role} role cannot be set by an API key or an import.`
        : `The address of a user with the ${user.role} role cannot be changed by an API key.`
    }
    if (change === 'password' && (user.totpEnabled || withPasskey.has(user.id))) {
      return 'The password of a user with a second factor (TOTP or a passkey) cannot be set by an API key or an import.'
    }
    return undefined
  }
}
