// The purge of soft-deleted users after the retention period (USER_RETENTION_DAYS,
// default 30): in-process, on the service's timer, and as `npm run purge`.
//
// Users are deleted with the clock moved back and the purge runs at the present, so that
// only this file's users are old enough to go, even on a database other tests share.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { promisify } from 'node:util'
import { userRow } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  eventually,
  signup,
  startServer,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { openDatabase } from '../../db/client.ts'
import { PRUNED_TABLES, pruneDeadRows } from '../../db/cross-tenant.ts'
import { and, eq, sql } from '../../db/orm.ts'
import { auditEvents, refreshTokens, sessions } from '../../db/schema.ts'
import type { Deps } from '../../deps.ts'
import { purgeUsers, scheduleUserPurge } from './admin-purge.ts'

const DAY = 24 * 60 * 60

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

/** A tenant with a member deleted `daysAgo` days ago (through the API, by an API key). */
async function deletedMember(on: TestServer, daysAgo: number) {
  const t = await createTenant(on)
  const member = await signup(on, t.slug)
  const key = await insertApiKey(on, t.tenantId)
  on.clock.advance(-daysAgo * DAY)
  const res = await on.request('DELETE', `/v1/${t.slug}/users/${member.user.id}`, undefined, {
    token: key,
  })
  on.clock.advance(daysAgo * DAY)
  assert.equal(res.status, 200)
  return { t, member, key }
}

async function events(on: { deps: Deps }, tenantId: string, action: string) {
  return on.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.action, action)))
}

test('purge: a user deleted more than 30 days ago is removed for good, with UserHardDeleted by the system', async () => {
  const { t, member } = await deletedMember(server, 31)
  const { user } = await signup(server, t.slug)
  await purgeUsers(server.deps)

  assert.equal(await userRow(server, t.tenantId, member.user.id), undefined)
  const leftSessions = await server.deps.db
    .select()
    .from(sessions)
    .where(and(eq(sessions.tenantId, t.tenantId), eq(sessions.userId, member.user.id)))
  assert.equal(leftSessions.length, 0)
  const leftTokens = await server.deps.db
    .select()
    .from(refreshTokens)
    .where(and(eq(refreshTokens.tenantId, t.tenantId), eq(refreshTokens.userId, member.user.id)))
  assert.equal(leftTokens.length, 0)

  const [hard] = await events(server, t.tenantId, 'UserHardDeleted')
  assert.equal(hard.userId, member.user.id)
  assert.equal(hard.actorType, 'system')
  assert.equal(hard.actorId, null)
  assert.equal(hard.email, null, 'the purge keeps no address')
  assert.equal(hard.metadata.retentionDays, 30)
  // The history stays: the soft delete is still on record.
  assert.equal((await events(server, t.tenantId, 'UserSoftDeleted')).length, 1)
  // Live users are never purged.
  assert.ok(await userRow(server, t.tenantId, user.id))
  assert.ok(await userRow(server, t.tenantId, t.admin.user.id))
})

test('purge keeps a user deleted less than 30 days ago', async () => {
  const { t, member } = await deletedMember(server, 29)
  await purgeUsers(server.deps)
  const row = await userRow(server, t.tenantId, member.user.id)
  assert.ok(row?.deletedAt, 'still there, still deleted')
  assert.equal((await events(server, t.tenantId, 'UserHardDeleted')).length, 0)
  // Deleted users stay unknown to the admin routes meanwhile.
  const admin = server.request('DELETE', `/v1/${t.slug}/users/${member.user.id}`, undefined, {
    token: t.admin.accessToken,
  })
  expectError(await admin, 404, 'not_found')
})

test('purge race: purges running at once remove each user once, with one UserHardDeleted', async () => {
  const deleted = await Promise.all([1, 2, 3].map(() => deletedMember(server, 40)))
  await Promise.all([purgeUsers(server.deps), purgeUsers(server.deps), purgeUsers(server.deps)])
  for (const { t, member } of deleted) {
    assert.equal(await userRow(server, t.tenantId, member.user.id), undefined)
    assert.equal((await events(server, t.tenantId, 'UserHardDeleted')).length, 1)
  }
})

test('the retention period is configurable (USER_RETENTION_DAYS)', async () => {
  const short = await startServer({ userRetentionDays: 1 })
  try {
    const old = await deletedMember(short, 2)
    const recent = await deletedMember(short, 0.5)
    await purgeUsers(short.deps)
    assert.equal(await userRow(short, old.t.tenantId, old.member.user.id), undefined)
    assert.ok(await userRow(short, recent.t.tenantId, recent.member.user.id))
    const [hard] = await events(short, old.t.tenantId, 'UserHardDeleted')
    assert.equal(hard.metadata.retentionDays, 1)
  } finally {
    await short.close()
  }
})

test('the service purges on its own timer', async () => {
  const { t, member } = await deletedMember(server, 31)
  const schedule = scheduleUserPurge(server.deps, server.app.log, { firstMs: 0, everyMs: 60_000 })
  try {
    const gone = await eventually(
      async () => (await userRow(server, t.tenantId, member.user.id)) === undefined,
    )
    assert.ok(gone, 'purged by the timer')
  } finally {
    await schedule.stop()
  }
  assert.equal((await events(server, t.tenantId, 'UserHardDeleted')).length, 1)
})

test('npm run purge (scripts/purge.ts) purges the configured database once', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'purge-'))
  // Unset DATABASE_URL: an embedded database in DATA_DIR, which the script then opens.
  const databaseUrl = process.env.DATABASE_URL || undefined
  const own = await startServer({ databaseUrl, dataDir })
  let closed = false
  try {
    const { t, member } = await deletedMember(own, 31)
    const kept = await deletedMember(own, 1)
    await own.close()
    closed = true
    const { stdout } = await promisify(execFile)(process.execPath, ['scripts/purge.ts'], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl ?? '',
        USER_RETENTION_DAYS: '30',
        LOG_LEVEL: 'silent',
      },
    })
    assert.match(stdout, /purged [1-9]\d* user\(s\) soft-deleted more than 30 day\(s\) ago/)
    for (const table of PRUNED_TABLES) {
      assert.match(stdout, new RegExp(`pruned \\d+ ${table} row\\(s\\) dead for more than 30 days`))
    }
    const database = await openDatabase(databaseUrl, dataDir)
    try {
      const reader = { deps: { db: database.db } as Deps }
      assert.equal(await userRow(reader, t.tenantId, member.user.id), undefined)
      assert.ok(await userRow(reader, kept.t.tenantId, kept.member.user.id))
      assert.equal((await events(reader, t.tenantId, 'UserHardDeleted')).length, 1)
    } finally {
      await database.close()
    }
  } finally {
    if (!closed) await own.close()
    rmSync(dataDir, { recursive: true, force: true })
  }
})

/**
 * Dead and live rows of one tenant in every table the purge prunes, written directly: the
 * dead ones expired (or ended) in 2000, so a cutoff in 2001 reaches them and no other
 * test's rows. Answers the ids to look for afterwards.
 */
async function deadAndLiveRows(on: TestServer, dead: number) {
  const t = await createTenant(on)
  const { user } = await signup(on, t.slug)
  const db = on.deps.db
  const args = { tenant: t.tenantId, user: user.id }
  const old = '2000-06-01T00:00:00Z'
  const future = '2099-01-01T00:00:00Z'
  const session = async (expires: string, revoked: string | null, tokenExpires: string | null) => {
    const id = crypto.randomUUID()
    await db.execute(sql`
      INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at, revoked_at)
      VALUES (${args.tenant}, ${id}, ${args.user}, ${old}, ${expires}, ${revoked})`)
    if (tokenExpires) {
      await db.execute(sql`
        INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
        VALUES (${args.tenant}, ${crypto.randomUUID()}, ${id}, ${args.user}, ${old}, ${tokenExpires})`)
    }
    return id
  }
  const code = (expires: string) =>
    db.execute(sql`
      INSERT INTO one_time_codes (tenant_id, id, user_id, purpose, code_hash, created_at, expires_at)
      VALUES (${args.tenant}, ${crypto.randomUUID()}, ${args.user}, 'login', 'x', ${old}, ${expires})`)
  const state = (expires: string) =>
    db.execute(sql`
      INSERT INTO oauth_states (tenant_id, state_hash, code_verifier, nonce, created_at, expires_at)
      VALUES (${args.tenant}, ${crypto.randomUUID()}, 'v', 'n', ${old}, ${expires})`)
  const challenge = (expires: string) =>
    db.execute(sql`
      INSERT INTO webauthn_challenges (tenant_id, challenge_hash, ceremony, user_id, created_at, expires_at)
      VALUES (${args.tenant}, ${crypto.randomUUID()}, 'registration', ${args.user}, ${old}, ${expires})`)
  // An OpenID provider model (CONTRACT §11): it has no creation time, only an expiry.
  const model = (expires: string) =>
    db.execute(sql`
      INSERT INTO oidc_models (tenant_id, model, id, payload, expires_at)
      VALUES (${args.tenant}, 'AccessToken', ${crypto.randomUUID()}, '{}', ${expires})`)
  // A SAML assertion id accepted once (CONTRACT §12), of one SSO connection.
  const connectionId = crypto.randomUUID()
  await db.execute(sql`
    INSERT INTO sso_connections (tenant_id, id, name, type, domains, created_at, updated_at)
    VALUES (${args.tenant}, ${connectionId}, 'c', 'saml', '{}', ${old}, ${old})`)
  const assertion = (expires: string) =>
    db.execute(sql`
      INSERT INTO sso_saml_assertions (tenant_id, connection_id, assertion_id, expires_at)
      VALUES (${args.tenant}, ${connectionId}, ${crypto.randomUUID()}, ${expires})`)
  // A remembered device of the user (CONTRACT §21).
  const device = (expires: string) =>
    db.execute(sql`
      INSERT INTO remembered_devices (tenant_id, token_hash, user_id, created_at, expires_at)
      VALUES (${args.tenant}, ${crypto.randomUUID()}, ${args.user}, ${old}, ${expires})`)
  const deadSessions: string[] = []
  for (let i = 0; i < dead; i++) {
    // Expired sessions with their expired tokens, and sessions revoked in 2000.
    deadSessions.push(await session(old, null, old))
    deadSessions.push(await session(future, old, old))
    await code(old)
    await state(old)
    await challenge(old)
    await model(old)
    await assertion(old)
    await device(old)
  }
  const live = await session(future, null, future)
  // Revoked long ago but with a token not yet expired: kept until the token is gone, so
  // that deleting a session never cascades.
  const revokedWithToken = await session(future, old, future)
  await code(future)
  await state(future)
  await challenge(future)
  await model(future)
  await assertion(future)
  await device(future)
  return { t, deadSessions, live, revokedWithToken }
}

/** The rows deadAndLiveRows wrote (created in 2000) that are still there. */
async function countRows(on: TestServer, table: string, tenantId: string) {
  const result = (await on.deps.db.execute(
    sql`SELECT count(*)::int AS n FROM ${sql.raw(table)}
      WHERE tenant_id = ${tenantId} AND created_at = '2000-06-01T00:00:00Z'`,
  )) as unknown as { rows: { n: number }[] }
  return result.rows[0].n
}

test('the purge prunes dead rows in bounded statements: all of them go, over several batches, and live rows stay', async () => {
  const dead = 7
  const { t, deadSessions, live, revokedWithToken } = await deadAndLiveRows(server, dead)
  const cutoff = new Date('2001-01-01T00:00:00Z')
  const batch = 3
  const pruned: Record<string, { deleted: number; statements: number }> = {}
  for (const table of PRUNED_TABLES) {
    pruned[table] = await pruneDeadRows(server.deps.db, table, cutoff, batch)
  }
  // Each table lost at least this tenant's dead rows, `batch` at a time.
  const expected = {
    refresh_tokens: 2 * dead,
    sessions: 2 * dead,
    one_time_codes: dead,
    oauth_states: dead,
    webauthn_challenges: dead,
    oidc_models: dead,
    sso_saml_assertions: dead,
    remembered_devices: dead,
  }
  for (const table of PRUNED_TABLES) {
    const { deleted, statements } = pruned[table]
    assert.ok(deleted >= expected[table], `${table}: ${deleted} deleted`)
    assert.ok(statements >= Math.ceil(deleted / batch), `${table}: ${statements} statements`)
    assert.ok(statements > 1, `${table}: several batches`)
  }
  // Left: the live rows, and the revoked session whose token has not expired.
  assert.equal(await countRows(server, 'refresh_tokens', t.tenantId), 2)
  assert.equal(await countRows(server, 'one_time_codes', t.tenantId), 1)
  assert.equal(await countRows(server, 'oauth_states', t.tenantId), 1)
  assert.equal(await countRows(server, 'webauthn_challenges', t.tenantId), 1)
  assert.equal(await countRows(server, 'remembered_devices', t.tenantId), 1)
  const models = (await server.deps.db.execute(
    sql`SELECT count(*)::int AS n FROM oidc_models WHERE tenant_id = ${t.tenantId}`,
  )) as unknown as { rows: { n: number }[] }
  assert.equal(models.rows[0].n, 1, 'the live oidc_models row stays')
  const assertions = (await server.deps.db.execute(
    sql`SELECT count(*)::int AS n FROM sso_saml_assertions WHERE tenant_id = ${t.tenantId}`,
  )) as unknown as { rows: { n: number }[] }
  assert.equal(assertions.rows[0].n, 1, 'the live sso_saml_assertions row stays')
  const sessionIds = await server.deps.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(eq(sessions.tenantId, t.tenantId))
  const left = new Set(sessionIds.map((r) => r.id))
  assert.ok(left.has(live) && left.has(revokedWithToken))
  for (const id of deadSessions) assert.ok(!left.has(id), 'dead session pruned')
  // The next pass finds nothing of this tenant, in one statement per table.
  const again = await pruneDeadRows(server.deps.db, 'sessions', cutoff, batch)
  assert.equal(again.deleted, 0)
  assert.equal(again.statements, 1)
})
