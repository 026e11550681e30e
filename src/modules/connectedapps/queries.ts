// The reads of me/applications: a user's live grants in oidc_models (the provider's rows,
// written only by oidc/queries.ts) with the name of the application each was made for.
// Every query names the tenant and the user.
import type { Handle } from '../../db/client.ts'
import { and, eq, isNull, or, sql } from '../../db/orm.ts'
import { applications, oidcModels } from '../../db/schema.ts'

export interface GrantRow {
  /** The grant's id: the grantId of every code and token issued under it. */
  id: string
  clientId: string
  name: string
  payload: Record<string, unknown>
}

/**
 * The user's live grants (model `Grant`, oidc-provider), each with its application; a
 * grant whose application is gone is not answered (deleting one deletes its grants too).
 */
export async function listUserGrants(
  db: Handle,
  tenantId: string,
  userId: string,
  clientId?: string,
): Promise<GrantRow[]> {
  const rows = await db
    .select({
      id: oidcModels.id,
      clientId: applications.clientId,
      name: applications.name,
      payload: oidcModels.payload,
    })
    .from(oidcModels)
    .innerJoin(
      applications,
      and(
        eq(applications.tenantId, oidcModels.tenantId),
        eq(applications.clientId, oidcModels.clientId),
      ),
    )
    .where(
      and(
        eq(oidcModels.tenantId, tenantId),
        eq(oidcModels.model, 'Grant'),
        eq(oidcModels.accountId, userId),
        clientId === undefined ? undefined : eq(oidcModels.clientId, clientId),
        or(isNull(oidcModels.expiresAt), sql`${oidcModels.expiresAt} > now()`),
      ),
    )
  return rows
}
