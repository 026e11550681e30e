// The queries of oidc_models, the one table that holds every model of oidc-provider
// (STYLE, "panva's provider on one adapter table"; logto's oidc-model-instance queries).
// No other file writes it. Every query names the tenant; a row past its expires_at is
// never answered (the purge deletes it later), and expiry is the database's clock, the
// same on every instance.
import type { Handle } from '../../db/client.ts'
import { and, eq, inArray, isNull, or, type SQL, sql } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

export type ModelPayload = Record<string, unknown>

/** The columns copied out of a payload, for the lookups and deletions that need an index. */
function lookups(payload: ModelPayload) {
  const text = (key: string) => {
    const value = payload[key]
    return typeof value === 'string' ? value : null
  }
  return {
    grantId: text('grantId'),
    userCode: text('userCode'),
    uid: text('uid'),
    accountId: text('accountId'),
    clientId: text('clientId'),
  }
}

/** Creates or replaces one model instance; `expiresIn` seconds from now, or never. */
export async function upsertModel(
  db: Handle,
  tenantId: string,
  model: string,
  id: string,
  payload: ModelPayload,
  expiresIn: number | undefined,
): Promise<void> {
  const expiresAt = expiresIn
    ? sql`now() + make_interval(secs => ${expiresIn})`
    : sql`NULL::timestamptz`
  const values = { tenantId, model, id, payload, ...lookups(payload) }
  await db
    .insert(oidcModels)
    .values({ ...values, expiresAt })
    .onConflictDoUpdate({
      target: [oidcModels.tenantId, oidcModels.model, oidcModels.id],
      set: { ...lookups(payload), payload, expiresAt, consumedAt: null },
    })
}

const live = or(isNull(oidcModels.expiresAt), sql`${oidcModels.expiresAt} > now()`)

async function findBy(db: Handle, tenantId: string, model: string, where: ReturnType<typeof eq>) {
  const rows = await db
    .select({ payload: oidcModels.payload, consumedAt: oidcModels.consumedAt })
    .from(oidcModels)
    .where(and(eq(oidcModels.tenantId, tenantId), eq(oidcModels.model, model), where, live))
    .limit(1)
  const row = rows[0]
  if (!row) return undefined
  // oidc-provider reads `consumed` off the payload (a consumed code replayed revokes its grant).
  return row.consumedAt
    ? { ...row.payload, consumed: Math.floor(row.consumedAt.getTime() / 1000) }
    : row.payload
}

export function findModel(db: Handle, tenantId: string, model: string, id: string) {
  return findBy(db, tenantId, model, eq(oidcModels.id, id))
}

export function findModelByUid(db: Handle, tenantId: string, model: string, uid: string) {
  return findBy(db, tenantId, model, eq(oidcModels.uid, uid))
}

export function findModelByUserCode(db: Handle, tenantId: string, model: string, code: string) {
  return findBy(db, tenantId, model, eq(oidcModels.userCode, code))
}

/**
 * Marks a single-use model spent, once: one conditional UPDATE, so of two concurrent
 * redemptions exactly one wins (true); the other, or a model already spent or gone, false.
 */
export async function consumeModel(
  db: Handle,
  tenantId: string,
  model: string,
  id: string,
): Promise<boolean> {
  const rows = await db
    .update(oidcModels)
    .set({ consumedAt: sql`now()` })
    .where(
      and(
        eq(oidcModels.tenantId, tenantId),
        eq(oidcModels.model, model),
        eq(oidcModels.id, id),
        isNull(oidcModels.consumedAt),
        live,
      ),
    )
    .returning({ id: oidcModels.id })
  return rows.length > 0
}

/** Deletes the tenant's models (live or not) that every condition selects; at least one. */
async function deleteBy(db: Handle, tenantId: string, match: SQL, ...more: SQL[]) {
  await db.delete(oidcModels).where(and(eq(oidcModels.tenantId, tenantId), match, ...more))
}

export async function destroyModel(db: Handle, tenantId: string, model: string, id: string) {
  await deleteBy(db, tenantId, eq(oidcModels.model, model), eq(oidcModels.id, id))
}

/** Everything issued under one grant (its codes and tokens, and the grant itself). */
export async function revokeGrant(db: Handle, tenantId: string, grantId: string) {
  await deleteBy(db, tenantId, eq(oidcModels.grantId, grantId))
}

/**
 * Every model issued to one application: deleting it revokes its grants and tokens
 * (CONTRACT §11); its JWT access tokens run out on their own.
 */
export async function deleteClientModels(db: Handle, tenantId: string, clientId: string) {
  await deleteBy(db, tenantId, eq(oidcModels.clientId, clientId))
}

/** Every model of one user (grants, tokens, sessions): the erasure's (CONTRACT §9). */
export async function deleteAccountModels(db: Handle, tenantId: string, accountId: string) {
  await deleteBy(db, tenantId, eq(oidcModels.accountId, accountId))
}

/**
 * Deletes and answers the provider sessions of a user that were signed in from any of
 * `serviceSessionIds` (the field provider.ts keeps in each, `serviceSessionId`): once those
 * ended, so did these. One statement, so of two instances told of the same end only one
 * gets each row (and sends its back-channel logouts).
 */
export async function takeProviderSessions(
  db: Handle,
  tenantId: string,
  accountId: string,
  serviceSessionIds: string[],
): Promise<ModelPayload[]> {
  if (serviceSessionIds.length === 0) return []
  const rows = await db
    .delete(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, tenantId),
        eq(oidcModels.model, 'Session'),
        eq(oidcModels.accountId, accountId),
        inArray(sql`${oidcModels.payload}->>'serviceSessionId'`, serviceSessionIds),
      ),
    )
    .returning({ payload: oidcModels.payload })
  return rows.map((row) => row.payload)
}
