// Connected applications (CONTRACT §11, Consent): the applications a user has granted
// access to through the OpenID provider, and taking that access back. A grant is the
// provider's record of what the user allowed one application; every authorization code,
// access token and refresh token issued under it carries its id (oidc_models.grant_id).
// Revoking deletes the grant and all of them in one transaction, in PostgreSQL, so every
// instance refuses them from the next request: the refresh token at the token endpoint,
// the opaque access token at introspection and userinfo (oidc-provider also looks the
// grant up). JWT access tokens for an API resource are self-contained and run out on
// their own (at most the resource's lifetime).
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { destroyModel, revokeGrant } from '../oidc/grants.ts'
import { type GrantRow, listUserGrants } from './queries.ts'
import type { ConnectedApplicationList } from './schemas.ts'

type Item = ConnectedApplicationList['items'][number]

/** The scopes of one grant: its OpenID scopes, then each resource's scopes. */
function scopesOf(payload: Record<string, unknown>): string[] {
  const words = (value: unknown) => (typeof value === 'string' ? value.split(' ') : [])
  const openid = payload.openid as { scope?: unknown } | undefined
  const resources = (payload.resources ?? {}) as Record<string, unknown>
  return [...words(openid?.scope), ...Object.values(resources).flatMap(words)].filter(Boolean)
}

/**
 * One item per application: a user may hold several grants for one (one per browser it
 * was authorized from); the item joins their scopes and is dated by the oldest.
 */
function byApplication(rows: GrantRow[]): Item[] {
  const items = new Map<string, { item: Item; scopes: Set<string>; iat: number }>()
  for (const row of rows) {
    const iat = typeof row.payload.iat === 'number' ? row.payload.iat : 0
    const found = items.get(row.clientId) ?? {
      item: { clientId: row.clientId, name: row.name, scopes: [], grantedAt: '' },
      scopes: new Set<string>(),
      iat,
    }
    for (const scope of scopesOf(row.payload)) found.scopes.add(scope)
    found.iat = Math.min(found.iat, iat)
    items.set(row.clientId, found)
  }
  return [...items.values()]
    .sort((a, b) => b.iat - a.iat || a.item.name.localeCompare(b.item.name))
    .map(({ item, scopes, iat }) => ({
      ...item,
      scopes: [...scopes],
      grantedAt: new Date(iat * 1000).toISOString(),
    }))
}

/** GET me/applications. */
export async function listConnectedApplications(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  userId: string,
): Promise<ConnectedApplicationList> {
  return { items: byApplication(await listUserGrants(deps.db, tenantId, userId)) }
}

/**
 * DELETE me/applications/{clientId}: the user's grants for that application, with every
 * code and token issued under them; audited `ApplicationConsentRevoked` in the same
 * transaction. No live grant of this user for it (an unknown client, another user's or
 * another tenant's): 404 `not_found`.
 */
export async function revokeConnectedApplication(
  deps: Pick<Deps, 'db' | 'audit'>,
  tenantId: string,
  userId: string,
  clientId: string,
  actor: Actor,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const grants = await listUserGrants(tx, tenantId, userId, clientId)
    if (grants.length === 0) fail('not_found')
    for (const grant of grants) {
      await revokeGrant(tx, tenantId, grant.id)
      await destroyModel(tx, tenantId, 'Grant', grant.id)
    }
    const [item] = byApplication(grants)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApplicationConsentRevoked',
        userId,
        metadata: { clientId, name: item.name, scopes: item.scopes },
      },
    ])
  })
}
