// The queries of oidc_models, the one table that holds every model of oidc-provider
// (STYLE, "panva's provider on one adapter table"; logto's oidc-model-instance queries).
// No other file writes it. Every query names the tenant; a row past its expires_at is
// never answered (the purge deletes it later), and expiry is the database's clock, the
// same on every instance.
import type { Handle } from '../../db/client.ts'
import { and, eq, inArray, isNull, or, type SQL, sql } from '../../db/orm.ts'
import { namedStatement } from '../../db/prepared.ts'
import { oidcModels } from '../../db/schema.ts'
import { currentMemo, forgetAll, type Memo, take } from './request-memo.ts'

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

// The adapter's reads and writes on every token request are raw named statements:
// PostgreSQL plans each once per connection, and nothing is assembled per call (Drizzle's
// query building was an eighth of an introspection's CPU). The payload goes in as text,
// cast in SQL, so both drivers send it as is.
const LIVE = '(expires_at IS NULL OR expires_at > now())'

const upsert = namedStatement(
  'oidc_model_upsert',
  `INSERT INTO oidc_models
     (tenant_id, model, id, payload, grant_id, user_code, uid, account_id, client_id, expires_at)
   VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, $7, $8, $9,
     now() + make_interval(secs => $10::double precision))
   ON CONFLICT (tenant_id, model, id) DO UPDATE SET
     payload = excluded.payload, grant_id = excluded.grant_id,
     user_code = excluded.user_code, uid = excluded.uid, account_id = excluded.account_id,
     client_id = excluded.client_id, expires_at = excluded.expires_at, consumed_at = NULL`,
)

/** Creates or replaces one model instance; `expiresIn` seconds from now, or never. */
export async function upsertModel(
  db: Handle,
  tenantId: string,
  model: string,
  id: string,
  payload: ModelPayload,
  expiresIn: number | undefined,
): Promise<void> {
  forgetAll()
  const l = lookups(payload)
  // make_interval of NULL is NULL: no expiry.
  await upsert(db, [
    tenantId,
    model,
    id,
    JSON.stringify(payload),
    l.grantId,
    l.userCode,
    l.uid,
    l.accountId,
    l.clientId,
    expiresIn || null,
  ])
}

const insertOnce = namedStatement(
  'oidc_model_insert_once',
  `INSERT INTO oidc_models (tenant_id, model, id, payload, expires_at)
   VALUES ($1, $2, $3, $4::text::jsonb, now() + make_interval(secs => $5::double precision))
   ON CONFLICT (tenant_id, model, id) DO UPDATE SET
     payload = excluded.payload, expires_at = excluded.expires_at, consumed_at = NULL
   WHERE oidc_models.expires_at IS NOT NULL AND oidc_models.expires_at <= now()
   RETURNING id`,
)

/**
 * Records a single-use value (a client assertion's or a DPoP proof's jti) for `expiresIn`
 * seconds in one statement: true when it was not live yet, false for a replay. Two
 * concurrent requests with the same value cannot both be first (STYLE, principle 4); a row
 * past its expiry (not yet purged) is taken over.
 */
export async function recordOnce(
  db: Handle,
  tenantId: string,
  model: string,
  id: string,
  payload: ModelPayload,
  expiresIn: number,
): Promise<boolean> {
  const rows = await insertOnce(db, [
    tenantId,
    model,
    id,
    JSON.stringify(payload),
    Math.max(expiresIn, 1),
  ])
  return rows.length === 1
}

/**
 * A row's payload as oidc-provider reads it: `consumed` is read off the payload (a consumed
 * code replayed revokes its grant).
 */
function answer(row: Record<string, unknown> | undefined): ModelPayload | undefined {
  if (!row) return undefined
  const payload = row.payload as ModelPayload
  const consumedAt = row.consumed_at as Date | null
  return consumedAt ? { ...payload, consumed: Math.floor(consumedAt.getTime() / 1000) } : payload
}

const byId = namedStatement(
  'oidc_model_by_id',
  `SELECT model, payload, consumed_at FROM oidc_models
   WHERE tenant_id = $1 AND model = ANY($2::text[]) AND id = $3 AND ${LIVE}`,
)

/**
 * The same, for a code or token found within a request (request-memo.ts): with each row,
 * the live grant its grant_id names and the live provider session its sessionUid names,
 * which oidc-provider looks up next (the grant's checks, the session binding). Each is a
 * LATERAL subquery with LIMIT 1, so it stays one primary-key (or uid index) probe per row
 * rather than a join the planner might run as a scan of the tenant's grants.
 */
const byIdWithGrant = namedStatement(
  'oidc_model_by_id_with_grant',
  `SELECT c.model, c.payload, c.consumed_at, c.grant_id,
     g.payload AS grant_payload, g.consumed_at AS grant_consumed_at,
     s.payload AS session_payload, s.consumed_at AS session_consumed_at
   FROM oidc_models c
   LEFT JOIN LATERAL (
     SELECT payload, consumed_at FROM oidc_models
     WHERE tenant_id = c.tenant_id AND model = 'Grant' AND id = c.grant_id AND ${LIVE}
     LIMIT 1
   ) g ON true
   LEFT JOIN LATERAL (
     SELECT payload, consumed_at FROM oidc_models
     WHERE tenant_id = c.tenant_id AND model = 'Session' AND uid = c.payload->>'sessionUid'
       AND ${LIVE}
     LIMIT 1
   ) s ON true
   WHERE c.tenant_id = $1 AND c.model = ANY($2::text[]) AND c.id = $3
     AND (c.expires_at IS NULL OR c.expires_at > now())`,
)
/** The models whose finds are followed by the grant's and the session's (byIdWithGrant). */
const GRANT_BOUND = new Set(['AuthorizationCode', 'RefreshToken', 'AccessToken'])

const byUid = namedStatement(
  'oidc_model_by_uid',
  `SELECT payload, consumed_at FROM oidc_models
   WHERE tenant_id = $1 AND model = $2 AND uid = $3 AND ${LIVE} LIMIT 1`,
)
const byUserCode = namedStatement(
  'oidc_model_by_user_code',
  `SELECT payload, consumed_at FROM oidc_models
   WHERE tenant_id = $1 AND model = $2 AND user_code = $3 AND ${LIVE} LIMIT 1`,
)

const grantKey = (tenantId: string, id: string) => `Grant\u0000${tenantId}\u0000${id}`
const sessionKey = (tenantId: string, uid: string) => `Session\u0000${tenantId}\u0000${uid}`

interface Waiter {
  model: string
  /** The request's memo, where the grant and session read with the row are left. */
  memo: Memo | undefined
  resolve(payload: ModelPayload | undefined): void
  reject(error: unknown): void
}

/**
 * The finds of one id asked in the same tick, by handle, then tenant and id. oidc-provider
 * looks an introspected or revoked token up as an AccessToken, a ClientCredentials and a
 * RefreshToken at once (the value does not say which it is): those are one statement here,
 * each find still answered only with its own model's row. Nothing is kept past the tick.
 */
const pendingFinds = new WeakMap<Handle, Map<string, Waiter[]>>()

export function findModel(
  db: Handle,
  tenantId: string,
  model: string,
  id: string,
): Promise<ModelPayload | undefined> {
  if (model === 'Grant') {
    const ahead = take(grantKey(tenantId, id))
    if (ahead.found) return Promise.resolve(ahead.value)
  }
  let pending = pendingFinds.get(db)
  if (!pending) {
    pending = new Map()
    pendingFinds.set(db, pending)
  }
  const key = `${tenantId}\u0000${id}`
  let waiters = pending.get(key)
  if (!waiters) {
    waiters = []
    pending.set(key, waiters)
    const batch = waiters
    const from = pending
    queueMicrotask(() => {
      from.delete(key)
      runFinds(db, tenantId, id, batch)
    })
  }
  const memo = currentMemo()
  return new Promise((resolve, reject) => waiters.push({ model, memo, resolve, reject }))
}

async function runFinds(db: Handle, tenantId: string, id: string, waiters: Waiter[]) {
  try {
    const models = [...new Set(waiters.map((w) => w.model))]
    const ahead = waiters.some((w) => w.memo && GRANT_BOUND.has(w.model))
    const rows = await (ahead ? byIdWithGrant : byId)(db, [tenantId, models, id])
    for (const waiter of waiters) {
      const row = rows.find((r) => r.model === waiter.model)
      if (row && ahead && waiter.memo && GRANT_BOUND.has(waiter.model)) {
        readAhead(waiter.memo, tenantId, row)
      }
      waiter.resolve(answer(row))
    }
  } catch (error) {
    for (const waiter of waiters) waiter.reject(error)
  }
}

/** Leaves the grant and session read with a code or token for the finds that follow it. */
function readAhead(memo: Memo, tenantId: string, row: Record<string, unknown>) {
  const found = (prefix: string) =>
    answer(
      row[`${prefix}_payload`]
        ? { payload: row[`${prefix}_payload`], consumed_at: row[`${prefix}_consumed_at`] }
        : undefined,
    )
  if (typeof row.grant_id === 'string') memo.set(grantKey(tenantId, row.grant_id), found('grant'))
  const uid = (row.payload as ModelPayload).sessionUid
  if (typeof uid === 'string') memo.set(sessionKey(tenantId, uid), found('session'))
}

export async function findModelByUid(db: Handle, tenantId: string, model: string, uid: string) {
  if (model === 'Session') {
    const ahead = take(sessionKey(tenantId, uid))
    if (ahead.found) return ahead.value
  }
  return answer((await byUid(db, [tenantId, model, uid]))[0])
}

export async function findModelByUserCode(
  db: Handle,
  tenantId: string,
  model: string,
  code: string,
) {
  return answer((await byUserCode(db, [tenantId, model, code]))[0])
}

const live = or(isNull(oidcModels.expiresAt), sql`${oidcModels.expiresAt} > now()`)

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
  forgetAll()
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
  forgetAll()
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
  forgetAll()
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
