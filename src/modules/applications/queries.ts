// The queries of the applications table; no other file writes it. Every query names the
// tenant, except the client lookup by client_id, which is still asked within one tenant.
import type { Db, Handle } from '../../db/client.ts'
import { type Paging, pageOwned } from '../../db/keyset.ts'
import { and, eq, sql } from '../../db/orm.ts'
import { findOwned } from '../../db/owned.ts'
import { isTransaction, perDatabase } from '../../db/prepared.ts'
import { applications } from '../../db/schema.ts'

export type Application = typeof applications.$inferSelect
export type NewApplication = typeof applications.$inferInsert

export async function insertApplication(db: Handle, row: NewApplication): Promise<Application> {
  const rows = await db.insert(applications).values(row).returning()
  return rows[0]
}

export function findApplication(
  db: Handle,
  tenantId: string,
  id: string,
): Promise<Application | undefined> {
  return findOwned(db, applications, tenantId, id)
}

const byClientId = (db: Handle) =>
  db
    .select()
    .from(applications)
    .where(
      and(
        eq(applications.tenantId, sql.placeholder('tenantId')),
        eq(applications.clientId, sql.placeholder('clientId')),
      ),
    )
    .limit(1)

// Prepared: the provider reads the client on every request that names one.
const preparedByClientId = perDatabase((db: Db) =>
  byClientId(db).prepare('application_by_client_id'),
)

/** The application the provider of `tenantId` knows as `clientId` (another tenant's: none). */
export async function findApplicationByClientId(db: Handle, tenantId: string, clientId: string) {
  const params = { tenantId, clientId }
  const rows = isTransaction(db)
    ? await byClientId(db).execute(params)
    : await preparedByClientId(db as Db).execute(params)
  return rows[0] as Application | undefined
}

/** Oldest first; `after` is the id of the last application of the page before. */
export const listApplications = (db: Handle, tenantId: string, page: Paging) =>
  pageOwned(db, applications, tenantId, page)

export async function updateApplication(
  db: Handle,
  tenantId: string,
  id: string,
  changes: Partial<NewApplication>,
) {
  const rows = await db
    .update(applications)
    .set(changes)
    .where(and(eq(applications.tenantId, tenantId), eq(applications.id, id)))
    .returning()
  return rows[0] as Application | undefined
}

export async function deleteApplication(db: Handle, tenantId: string, id: string) {
  const rows = await db
    .delete(applications)
    .where(and(eq(applications.tenantId, tenantId), eq(applications.id, id)))
    .returning()
  return rows[0] as Application | undefined
}

/** CONTRACT §22: the tenant's saml application whose SP has entity id `entityId`. */
export async function findSamlApplicationByEntityId(
  db: Handle,
  tenantId: string,
  entityId: string,
) {
  const rows = await db
    .select()
    .from(applications)
    .where(
      and(
        eq(applications.tenantId, tenantId),
        eq(applications.samlEntityId, entityId),
        eq(applications.type, 'saml'),
      ),
    )
    .limit(1)
  return rows[0] as Application | undefined
}
