// The database's own promise after a crash: no half-done change. Each invariant is read
// straight from PostgreSQL (the `pg` package, not the service) for one tenant and answers
// its violations. They follow the writes of src/ (schema.ts and the services): a change
// and its audit rows share one transaction, a refresh spends its token and stores the
// successor in one statement, an invite is spent in the transaction that creates its user.
import pg from 'pg'

type Rows = Record<string, any>[]

interface Invariant {
  name: string
  /** Violations: one line each, empty when the invariant holds. */
  check(db: pg.Client, tenantId: string): Promise<string[]>
}

/** An invariant stated as a query returning the offending rows. */
function rows(name: string, text: string): Invariant {
  return {
    name,
    async check(db, tenantId) {
      const result = await db.query(text, [tenantId])
      return (result.rows as Rows).map((r) => JSON.stringify(r))
    },
  }
}

const INVARIANTS: Invariant[] = [
  // SPEC, Refresh token family: a rotation spends the token and stores its successor at
  // once, so a family holds exactly one unspent token: never two live ones, never none.
  rows(
    'each refresh-token family has exactly one unspent token',
    `SELECT s.id, count(rt.token_hash) FILTER (WHERE rt.used_at IS NULL) AS unspent
       FROM sessions s
       LEFT JOIN refresh_tokens rt ON rt.tenant_id = s.tenant_id AND rt.session_id = s.id
      WHERE s.tenant_id = $1
      GROUP BY s.id
     HAVING count(rt.token_hash) FILTER (WHERE rt.used_at IS NULL) <> 1`,
  ),
  rows(
    'no accepted invite without its user',
    `SELECT i.id, i.accepted_user_id FROM invites i
       LEFT JOIN users u ON u.tenant_id = i.tenant_id AND u.id = i.accepted_user_id
      WHERE i.tenant_id = $1
        AND (i.accepted_at IS NOT NULL OR i.accepted_user_id IS NOT NULL)
        AND (i.accepted_at IS NULL OR u.id IS NULL OR u.email_normalized <> i.email_normalized)`,
  ),
  rows(
    'each accepted invite has its InviteAccepted audit row',
    `SELECT i.id FROM invites i
      WHERE i.tenant_id = $1 AND i.accepted_at IS NOT NULL
        AND (SELECT count(*) FROM audit_events a
              WHERE a.tenant_id = i.tenant_id AND a.action = 'InviteAccepted'
                AND a.metadata->>'inviteId' = i.id::text AND a.user_id = i.accepted_user_id) <> 1`,
  ),
  rows(
    'each InviteAccepted audit row has its accepted invite',
    `SELECT a.id FROM audit_events a
       LEFT JOIN invites i ON i.tenant_id = a.tenant_id AND i.id::text = a.metadata->>'inviteId'
      WHERE a.tenant_id = $1 AND a.action = 'InviteAccepted'
        AND (i.accepted_at IS NULL OR i.accepted_user_id IS DISTINCT FROM a.user_id)`,
  ),
  rows(
    'each invite has its InviteCreated audit row, and each such row its invite',
    `SELECT coalesce(i.id::text, a.metadata->>'inviteId') AS invite
       FROM (SELECT * FROM invites WHERE tenant_id = $1) i
       FULL JOIN (SELECT * FROM audit_events WHERE tenant_id = $1 AND action = 'InviteCreated') a
         ON a.metadata->>'inviteId' = i.id::text
      WHERE i.id IS NULL OR a.id IS NULL`,
  ),
  rows(
    'each user has exactly one UserSignup audit row',
    `SELECT u.id FROM users u
      WHERE u.tenant_id = $1
        AND (SELECT count(*) FROM audit_events a
              WHERE a.tenant_id = u.tenant_id AND a.action = 'UserSignup' AND a.user_id = u.id) <> 1`,
  ),
  rows(
    'each UserSignup audit row has its user',
    `SELECT a.id, a.user_id FROM audit_events a
       LEFT JOIN users u ON u.tenant_id = a.tenant_id AND u.id = a.user_id
      WHERE a.tenant_id = $1 AND a.action = 'UserSignup' AND u.id IS NULL`,
  ),
  rows(
    'each session has its SessionCreated audit row, and each such row its session',
    `SELECT coalesce(s.id::text, a.metadata->>'sessionId') AS session
       FROM (SELECT * FROM sessions WHERE tenant_id = $1) s
       FULL JOIN (SELECT * FROM audit_events WHERE tenant_id = $1 AND action = 'SessionCreated') a
         ON a.metadata->>'sessionId' = s.id::text AND a.user_id = s.user_id
      WHERE s.id IS NULL OR a.id IS NULL`,
  ),
  rows(
    'each revoked session has a SessionRevoked audit row',
    `SELECT s.id, s.revoke_reason FROM sessions s
      WHERE s.tenant_id = $1 AND s.revoked_at IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM audit_events a
                         WHERE a.tenant_id = s.tenant_id AND a.action = 'SessionRevoked'
                           AND a.metadata->>'sessionId' = s.id::text)`,
  ),
  rows(
    'each SessionRevoked audit row has its session revoked',
    `SELECT a.id, a.metadata->>'sessionId' AS session FROM audit_events a
       LEFT JOIN sessions s ON s.tenant_id = a.tenant_id AND s.id::text = a.metadata->>'sessionId'
      WHERE a.tenant_id = $1 AND a.action = 'SessionRevoked'
        AND (s.id IS NULL OR s.revoked_at IS NULL)`,
  ),
  // CONTRACT §2, PATCH users: suspending ends the user's sessions in the same transaction.
  rows(
    'no live session belongs to a Suspended user',
    `SELECT s.id, s.user_id FROM sessions s
       JOIN users u ON u.tenant_id = s.tenant_id AND u.id = s.user_id
      WHERE s.tenant_id = $1 AND u.status = 'Suspended' AND s.revoked_at IS NULL`,
  ),
  rows(
    'the tenant keeps an active Admin',
    `SELECT t.id FROM tenants t
      WHERE t.id = $1 AND NOT EXISTS (
        SELECT 1 FROM users u WHERE u.tenant_id = t.id AND u.role = 'Admin'
           AND u.status = 'Active' AND u.deleted_at IS NULL)`,
  ),
  { name: 'each UserUpdated audit row matches the role and status history', check: replayChanges },
]

/**
 * Replays every UserUpdated row (CONTRACT §2: the changes in metadata, `{from, to}` per
 * field) from each user's first state: each change must start where the last one ended,
 * and the last one must be the user's current role and status. A change without its
 * audit row, or an audit row without its change, breaks the chain.
 */
async function replayChanges(db: pg.Client, tenantId: string): Promise<string[]> {
  const users = (
    await db.query(
      `SELECT u.id, u.role, u.status,
              EXISTS (SELECT 1 FROM audit_events a WHERE a.tenant_id = u.tenant_id
                        AND a.action = 'TenantCreated' AND a.user_id = u.id) AS founder,
              (SELECT a.metadata->>'role' FROM audit_events a WHERE a.tenant_id = u.tenant_id
                 AND a.action = 'InviteAccepted' AND a.user_id = u.id LIMIT 1) AS invited_as
         FROM users u WHERE u.tenant_id = $1`,
      [tenantId],
    )
  ).rows as Rows
  const changes = (
    await db.query(
      `SELECT user_id, metadata->'changes' AS changes FROM audit_events
        WHERE tenant_id = $1 AND action = 'UserUpdated' ORDER BY created_at, id`,
      [tenantId],
    )
  ).rows as Rows
  const state = new Map<string, { role: string; status: string }>()
  for (const u of users) {
    state.set(u.id, { role: u.founder ? 'Admin' : (u.invited_as ?? 'Member'), status: 'Active' })
  }
  const violations: string[] = []
  for (const { user_id: id, changes: c } of changes) {
    const s = state.get(id)
    if (!s) {
      violations.push(`UserUpdated for a user that does not exist: ${id}`)
      continue
    }
    for (const field of ['role', 'status'] as const) {
      if (!c?.[field]) continue
      if (c[field].from !== s[field]) {
        violations.push(`${id}: ${field} changed from ${c[field].from}, but it was ${s[field]}`)
      }
      s[field] = c[field].to
    }
  }
  for (const u of users) {
    const s = state.get(u.id)
    if (s && (s.role !== u.role || s.status !== u.status)) {
      violations.push(`${u.id}: audit says ${s.role}/${s.status}, row says ${u.role}/${u.status}`)
    }
  }
  return violations
}

export interface InvariantResult {
  held: number
  violations: string[]
}

/** Checks every invariant for one tenant; violations are named `invariant: offender`. */
export async function checkInvariants(url: string, tenantId: string): Promise<InvariantResult> {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    const violations: string[] = []
    let held = 0
    for (const invariant of INVARIANTS) {
      const found = await invariant.check(db, tenantId)
      if (found.length === 0) held++
      for (const v of found.slice(0, 5)) violations.push(`${invariant.name}: ${v}`)
    }
    return { held, violations }
  } finally {
    await db.end()
  }
}

/** One query on the private cluster, for the scenarios' own durability checks. */
export async function query(url: string, text: string, params: unknown[] = []): Promise<Rows> {
  const db = new pg.Client({ connectionString: url })
  await db.connect()
  try {
    return (await db.query(text, params)).rows as Rows
  } finally {
    await db.end()
  }
}
