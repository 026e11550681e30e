// npm run bench:scale (issue 10, "Cost as the work grows"): how the latency of the
// service's routes changes as the data grows, one dimension at a time:
//
//   tenants    10 → 100,000 tenants              GET /me, one hot tenant and a random one
//   users      1,000 → 1,000,000 in one tenant    login, GET /me, SCIM userName lookup (with
//                                                 its EXPLAIN and its ratio to GET /me),
//                                                 users list first and deep page
//   sessions   10,000 → 5,000,000 live sessions   refresh, logout
//   audit      1,000,000 → 20,000,000 events      audit list: first page, filters, deep pages
//   revoked    0 → 1,000,000 revoked in 15 min    the revocation cache: entries, RSS, poll time,
//                                                 startup, and GET /me while it holds them
//   organizations 100 → 10,000 organizations, ten  GET me/organizations of a member of ten, an
//              members each (100,000 memberships   organization token by auth/refresh
//              at the largest) in one tenant       {organizationId} (CONTRACT §18), a plain refresh
//
// The data is seeded in bulk (INSERT … SELECT generate_series, never the API) into a
// database of its own, SCALE_DATABASE_URL, by default
// postgres://postgres@127.0.0.1:5432/tenant_auth_scale (created when missing and migrated
// with the project's migrations, scripts/migrate.ts). A dimension grows in place from one
// size to the next, and a later run reuses what is there. At each size the service is
// started as a child process against that database (as bench/run.ts does) and its routes
// are timed by sequential requests on one keep-alive connection (p50/p99 in ms; a few
// paths also get a short autocannon run for req/s).
//
//   SCALE=small   the smallest size of each dimension (CI; under two minutes; the
//                 database is dropped at the end)
//   SCALE=full    every size (the default; outside CI: the largest sizes seed for a while)
//   SCALE_ONLY=audit,sessions            some dimensions only
//   SCALE_SIZES='audit=1e6,1e7;users=1000'  other sizes for some dimensions
//   SCALE_KEEP=1  keep the database after a small run
//
// Prints a table per dimension and writes bench/results/scale-<date>[-small].json (a run
// of some dimensions replaces those in the day's file and keeps the others).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { availableParallelism, totalmem } from 'node:os'
import autocannon from 'autocannon'
import { createSigner } from 'fast-jwt'
import pg from 'pg'
import { openDatabase } from '../src/db/client.ts'
import { hashToken } from '../src/lib/crypto.ts'
import { encodeCursor } from '../src/lib/cursor.ts'
import { hashPassword } from '../src/lib/passwords.ts'
import { RevocationCache } from '../src/modules/sessions/revocations.ts'
import { START_ARGS } from '../test/start-args.ts'

type Dimension = 'tenants' | 'users' | 'sessions' | 'audit' | 'revoked' | 'organizations'
const DIMENSIONS: Dimension[] = [
  'tenants',
  'users',
  'sessions',
  'audit',
  'revoked',
  'organizations',
]
const FULL_SIZES: Record<Dimension, number[]> = {
  tenants: [10, 100, 1_000, 10_000, 100_000],
  users: [1_000, 10_000, 100_000, 1_000_000],
  sessions: [10_000, 100_000, 1_000_000, 5_000_000],
  audit: [1_000_000, 10_000_000, 20_000_000],
  revoked: [0, 1_000, 10_000, 100_000, 1_000_000],
  organizations: [100, 1_000, 10_000],
}

const MODE = process.env.SCALE === 'small' ? 'small' : 'full'
const SMALL = MODE === 'small'
const DB_URL =
  process.env.SCALE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/tenant_auth_scale'
const PORT = Number(process.env.SCALE_PORT ?? 3911)
const BASE = `http://127.0.0.1:${PORT}`
const PUBLIC_URL = 'http://scale.test'
const JWT_SECRET = 'scale-bench-secret-0123456789-abcdefghijklmnop'
const METRICS_TOKEN = 'scale-bench-metrics'
const PASSWORD = 'plum-orbit-canvas-77'
const DATA_DIR = '/tmp/tenant-auth-scale'
/** Sequential requests per route (fast paths; slower paths use fewer). */
const N = SMALL ? 200 : 1000
const AUTOCANNON_SECONDS = SMALL ? 2 : 4

const only = new Set(
  (process.env.SCALE_ONLY ?? DIMENSIONS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
)
for (const d of only) {
  if (!DIMENSIONS.includes(d as Dimension)) throw new Error(`SCALE_ONLY: unknown dimension ${d}`)
}
const sizes = sizesFor()

// Rows of the printed tables and of the JSON file.
interface Row {
  size: number
  route: string
  p50: number
  p99: number
  n: number
  rps?: number
  [extra: string]: unknown
}
const results: Partial<Record<Dimension, { rows: Row[]; seedSeconds: Record<string, number> }>> = {}

const started = performance.now()
let failures = 0
// Seeding only (the service's own connections keep the defaults): no wait for the WAL
// flush at each commit, memory for index builds, and no foreign-key triggers (the seeded
// rows refer to rows seeded before them; session_replication_role needs a superuser, as
// the default URL's postgres is).
const pool = new pg.Pool({
  connectionString: DB_URL,
  max: 4,
  options:
    '-c synchronous_commit=off -c maintenance_work_mem=1GB -c session_replication_role=replica',
})
// Access tokens as the service signs them with JWT_SECRET (HS256, kid = digest prefix),
// minted here so that any user of the seeded data can be signed in without a login.
const sign = createSigner({
  key: JWT_SECRET,
  algorithm: 'HS256',
  kid: createHash('sha256').update(JWT_SECRET, 'utf8').digest('base64url').slice(0, 12),
})
let passwordHash = ''
/** Rows the current size's seeding inserted (0: it was there already). */
let inserted = 0

async function main(): Promise<void> {
  await ensureDatabase(DB_URL)
  migrate()
  await sql(`
    CREATE OR REPLACE FUNCTION scale_b64url(b bytea) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT rtrim(translate(encode(b, 'base64'), E'+/\\n', '-_'), '=') $$;
    CREATE OR REPLACE FUNCTION scale_refresh_hash(seed text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT scale_b64url(sha256(convert_to(scale_b64url(sha256(convert_to(seed, 'UTF8'))), 'UTF8'))) $$;
    CREATE TABLE IF NOT EXISTS scale_dropped_indexes (name text PRIMARY KEY, definition text NOT NULL);
  `)
  await restoreIndexes()
  passwordHash = await hashPassword(PASSWORD)

  console.log(
    `bench:scale ${MODE}: ${[...only].join(', ')} on ${DB_URL} (${availableParallelism()} cores, ${Math.round(totalmem() / 2 ** 30)} GiB)`,
  )
  for (const dimension of DIMENSIONS) {
    if (!only.has(dimension)) continue
    results[dimension] = { rows: [], seedSeconds: {} }
    console.log(`\n== ${dimension}: ${sizes[dimension].map(fmtInt).join(' → ')}`)
    for (const size of sizes[dimension]) {
      try {
        const t0 = performance.now()
        inserted = 0
        await seeders[dimension](size)
        const seconds = (performance.now() - t0) / 1000
        // A size already seeded by an earlier run keeps that run's seeding time.
        if (inserted > 0)
          results[dimension].seedSeconds[String(size)] = Math.round(seconds * 10) / 10
        console.log(`  ${fmtInt(size)}: seeded in ${seconds.toFixed(1)} s`)
        const rows = await measurers[dimension](size)
        results[dimension].rows.push(...rows)
        for (const r of rows) {
          const extra = r.rps === undefined ? '' : `, ${Math.round(r.rps)} req/s`
          console.log(`    ${r.route}: p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms${extra}`)
        }
        writeResults(false)
      } catch (error) {
        // A size that fails ends its dimension; the others still run.
        failures++
        console.error(`  ${dimension} at ${fmtInt(size)} failed:`, error)
        break
      }
    }
  }

  await pool.end()
  printTables()
  writeResults()
  if (SMALL && !process.env.SCALE_KEEP) await dropDatabase(DB_URL)
  console.log(
    `\nbench:scale ${MODE} done in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  )
  process.exit(failures > 0 ? 1 : 0)
}

// ---------------------------------------------------------------------------------------
// Seeding. Each dimension has its tenant(s) and grows them to `size` in chunks, each chunk
// one INSERT … SELECT generate_series; what a previous run seeded is counted and kept.

const seeders: Record<Dimension, (size: number) => Promise<void>> = {
  async tenants(size) {
    // Tenant i: slug scale-t-i, one Admin user (for GET /me).
    const have = await count(`SELECT count(*) FROM tenants WHERE slug LIKE 'scale-t-%'`)
    await chunks(have, size, 50_000, async (from, to) => {
      await sql(
        `INSERT INTO tenants (id, slug, name, created_at, updated_at)
         SELECT md5('scale-t' || i)::uuid, 'scale-t-' || i, 'Scale ' || i, now(), now()
         FROM generate_series($1::int, $2::int) i`,
        [from, to],
      )
      await sql(
        `INSERT INTO users (tenant_id, id, email, email_normalized, password_hash, status, role,
           email_verified, created_at, updated_at)
         SELECT md5('scale-t' || i)::uuid, md5('scale-tu' || i)::uuid, 'admin' || i || '@scale.test',
           'admin' || i || '@scale.test', $3, 'Active', 'Admin', true, now(), now()
         FROM generate_series($1::int, $2::int) i`,
        [from, to, passwordHash],
      )
    })
    await sql('VACUUM ANALYZE tenants')
  },

  async users(size) {
    // One tenant; user i created i minutes after 2020-01-01 (so list order is i order),
    // with a uuidv7-shaped id of that time, as the service makes them. User 1 is the Admin.
    const tenantId = await ensureTenant('scale-users')
    const have = await count('SELECT count(*) FROM users WHERE tenant_id = $1', [tenantId])
    await chunks(
      have,
      size,
      200_000,
      async (from, to) => {
        await sql(
          `INSERT INTO users (tenant_id, id, email, email_normalized, password_hash, status, role,
           email_verified, created_at, updated_at)
         SELECT $1, ${uuid7Sql(userMs('i'), KIND.user, 'i')}, 'user' || i || '@scale.test',
           'user' || i || '@scale.test', $4, 'Active', CASE WHEN i = 1 THEN 'Admin' ELSE 'Member' END,
           true, ${timeSql(userMs('i'))}, ${timeSql(userMs('i'))}
         FROM generate_series($2::int, $3::int) i`,
          [tenantId, from, to, passwordHash],
        )
      },
      ['users'],
    )
    await apiKey(tenantId)
    await sql('VACUUM ANALYZE users')
  },

  async sessions(size) {
    // One tenant with 10,000 users; session i belongs to user i % 10,000, was created i/2
    // seconds before 2026-11-01, expires in 2030 and has one live refresh token whose value
    // is derived from i (refreshToken(i)), so any session can be refreshed or ended.
    const tenantId = await ensureTenant('scale-sessions')
    await seedPlainUsers(tenantId, KIND.sessionUser, 10_000)
    const have = await count('SELECT count(*) FROM sessions WHERE tenant_id = $1', [tenantId])
    await chunks(
      have,
      size,
      250_000,
      // One transaction per chunk: a session is never left without its token.
      (from, to) =>
        transaction(async (query) => {
          await query(
            `INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at, ip, user_agent)
         SELECT $1, ${uuid7Sql(sessionMs('i'), KIND.session, 'i')},
           ${plainUserSql(KIND.sessionUser, 'i % 10000')}, ${timeSql(sessionMs('i'))},
           timestamptz '2030-01-01', '10.0.' || (i % 250) || '.' || (i % 199),
           'Mozilla/5.0 (scale bench)'
         FROM generate_series($2::int, $3::int) i`,
            [tenantId, from, to],
          )
          await query(
            `INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
         SELECT $1, scale_refresh_hash('scale-rt-' || i), ${uuid7Sql(sessionMs('i'), KIND.session, 'i')},
           ${plainUserSql(KIND.sessionUser, 'i % 10000')}, ${timeSql(sessionMs('i'))},
           timestamptz '2030-01-01'
         FROM generate_series($2::int, $3::int) i`,
            [tenantId, from, to],
          )
        }),
      ['sessions', 'refresh_tokens'],
    )
    await sql('VACUUM ANALYZE sessions')
    await sql('VACUUM ANALYZE refresh_tokens')
  },

  async audit(size) {
    // One tenant; event i happened i × 1.5 s before 2026-11-01 (20,000,000 events: 347
    // days), with the mix of bench/audit.ts: 10,000 users, sessions and logins most, rare
    // InviteExpired (one in 50,000), emails and metadata to search.
    const tenantId = await ensureTenant('scale-audit')
    const have = await count('SELECT count(*) FROM audit_events WHERE tenant_id = $1', [tenantId])
    await chunks(
      have,
      size,
      500_000,
      async (from, to) => {
        await sql(
          `INSERT INTO audit_events
           (tenant_id, id, action, actor_type, actor_id, user_id, email, ip, user_agent, metadata, created_at)
         SELECT $1::uuid, ${uuid7Sql(eventMs('i'), KIND.event, 'i')}, action,
           CASE WHEN action IN ('UserLoginFailed', 'PasswordlessCodeFailed') THEN 'anonymous' ELSE 'user' END,
           CASE WHEN action IN ('UserLoginFailed', 'PasswordlessCodeFailed') THEN NULL ELSE uid::text END,
           uid, email, '10.' || (u % 250) || '.' || (i % 250) || '.' || (i % 7 + 1),
           'Mozilla/5.0 (bench) Safari/605.1.15',
           CASE
             WHEN action IN ('SessionCreated', 'SessionRevoked')
               THEN jsonb_build_object('sessionId', ${uuid7Sql(eventMs('i'), KIND.session, 'i')})
             WHEN action = 'UserLoginFailed'
               THEN jsonb_build_object('email', email, 'reason', 'invalid_credentials')
             WHEN action = 'UserLogin'
               THEN jsonb_build_object('via', CASE WHEN i % 5 = 0 THEN 'passwordless' ELSE 'password' END)
             ELSE '{}'::jsonb
           END,
           ts
         FROM (
           SELECT i, u, ${plainUserSql(KIND.eventUser, 'u')} AS uid, 'user' || u || '@example.com' AS email,
             ${timeSql(eventMs('i'))} AS ts,
             CASE
               WHEN i % 50000 = 0 THEN 'InviteExpired'
               WHEN i % 1000 = 7 THEN 'PasswordlessCodeFailed'
               ELSE (ARRAY[
                 'SessionCreated', 'SessionCreated', 'SessionCreated', 'SessionCreated',
                 'SessionCreated', 'SessionCreated', 'UserLogin', 'UserLogin', 'UserLogin',
                 'UserLogin', 'UserLogin', 'UserLoginFailed', 'UserLoginFailed', 'SessionRevoked',
                 'SessionRevoked', 'UserLogout', 'PasswordlessCodeSent', 'PasswordlessCodeVerified',
                 'MfaTotpVerified', 'MfaEmailOtpSent'
               ])[1 + ((hashint4(i)::bigint & 2147483647) % 20)]
             END AS action
           FROM (
             SELECT i, (hashint4(i + 7)::bigint & 2147483647) % 10000 AS u
             FROM generate_series($2::int, $3::int) AS i
           ) s
         ) r`,
          [tenantId, from, to],
        )
      },
      ['audit_events'],
    )
    await apiKey(tenantId)
    await sql('VACUUM ANALYZE audit_events')
  },

  async revoked(size) {
    // One tenant with 1,000 users. Every size starts from nothing: the tenant's sessions
    // are deleted, then `size` sessions revoked at times spread over the last 14 minutes
    // are inserted, with a pool of live sessions for the revoker (measureRevoked).
    const tenantId = await ensureTenant('scale-revoked')
    await seedPlainUsers(tenantId, KIND.revokedUser, 1_000)
    await sql('DELETE FROM sessions WHERE tenant_id = $1', [tenantId])
    // The feed spans tenants: what the other dimensions revoked (logouts) leaves the window.
    await sql(
      `UPDATE sessions SET revoked_at = revoked_at - interval '1 hour'
       WHERE revoked_at > now() - interval '20 minutes'`,
    )
    await chunks(0, size, 250_000, async (from, to) => {
      await sql(
        `INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at, revoked_at, revoke_reason)
         SELECT $1, gen_random_uuid(), ${plainUserSql(KIND.revokedUser, 'i % 1000')}, now() - interval '1 hour',
           now() + interval '30 days', now() - random() * interval '14 minutes', 'logout'
         FROM generate_series($2::int, $3::int) i`,
        [tenantId, from, to],
      )
    })
    const spare = Math.ceil(revocationRate(size) * 60) + 1_000
    await sql(
      `INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at)
       SELECT $1, gen_random_uuid(), ${plainUserSql(KIND.revokedUser, 'i % 1000')}, now(),
         now() + interval '30 days'
       FROM generate_series(1, $2::int) i`,
      [tenantId, spare],
    )
    await sql('VACUUM ANALYZE sessions')
  },

  organizations: seedOrganizations,
}

async function seedOrganizations(size: number) {
  // One tenant with 10,000 people and one organization role; organization i (id
  // md5('scale-o' || i)) has ten members, each holding that role, so a person belongs to
  // size × 10 / 10,000 organizations (ten at 10,000).
  const tenantId = await ensureTenant('scale-orgs')
  await seedPlainUsers(tenantId, KIND.orgUser, ORG_USERS)
  await sql(
    `INSERT INTO roles (tenant_id, id, name, name_normalized, kind, resource_scopes, created_at, updated_at)
     VALUES ($1, md5('scale-org-role')::uuid, 'editor', 'editor', 'organization',
       '[{"resource": "https://api.scale.test", "scopes": ["docs:write"]}]', now(), now())
     ON CONFLICT DO NOTHING`,
    [tenantId],
  )
  const have = await count('SELECT count(*) FROM organizations WHERE tenant_id = $1', [tenantId])
  await chunks(
    have,
    size,
    5_000,
    (from, to) =>
      transaction(async (query) => {
        await query(
          `INSERT INTO organizations (tenant_id, id, name, created_at, updated_at)
           SELECT $1, md5('scale-o' || i)::uuid, 'Organization ' || i, now(), now()
           FROM generate_series($2::int, $3::int) i`,
          [tenantId, from, to],
        )
        const members = `SELECT i, ${plainUserSql(KIND.orgUser, `((i * ${ORG_MEMBERS} + j) % ${ORG_USERS})`)} AS u
           FROM generate_series($2::int, $3::int) i, generate_series(0, ${ORG_MEMBERS - 1}) j`
        await query(
          `INSERT INTO organization_members (tenant_id, organization_id, user_id, created_at)
           SELECT $1, md5('scale-o' || i)::uuid, u, now() FROM (${members}) m`,
          [tenantId, from, to],
        )
        await query(
          `INSERT INTO organization_member_roles (tenant_id, organization_id, user_id, role_id)
           SELECT $1, md5('scale-o' || i)::uuid, u, md5('scale-org-role')::uuid FROM (${members}) m`,
          [tenantId, from, to],
        )
      }),
    ['organizations', 'organization_members', 'organization_member_roles'],
  )
  await sql('VACUUM ANALYZE organizations')
  await sql('VACUUM ANALYZE organization_members')
  await sql('VACUUM ANALYZE organization_member_roles')
}

async function seedPlainUsers(tenantId: string, kind: number, n: number) {
  await sql(
    `INSERT INTO users (tenant_id, id, email, email_normalized, password_hash, status, role,
       email_verified, created_at, updated_at)
     SELECT $1, ${plainUserSql(kind, 'i')}, 'u' || $2::int || '-' || i || '@scale.test',
       'u' || $2::int || '-' || i || '@scale.test', $4, 'Active', 'Member', true, now(), now()
     FROM generate_series(0, $3::int - 1) i
     ON CONFLICT DO NOTHING`,
    [tenantId, kind, n, passwordHash],
  )
}

// Seeded times and ids are integer arithmetic, which PostgreSQL does fast in bulk: a time
// is milliseconds since the epoch, an id is shaped as a uuidv7 (its time, then the kind
// of row and its number), or for users that no list orders, a kind and a number.
const KIND = {
  user: 1,
  session: 2,
  event: 3,
  sessionUser: 4,
  revokedUser: 5,
  eventUser: 6,
  orgUser: 7,
  orgProbe: 8,
}
/** The organizations dimension's people: member j of organization i is user (10 i + j) % 10,000. */
const ORG_USERS = 10_000
const ORG_MEMBERS = 10
/**
 * Its measured people: probe p is a member of exactly ten organizations at every size,
 * organization 1 + ((10 p + q) × 7919 mod size) for q < 10 (distinct: 7919 is a prime
 * other than 2 and 5), so the cost read is that of ten memberships among many more.
 */
const ORG_PROBES = 100
const probeOrg = (size: number, p: number, q: number) => 1 + (((p * ORG_MEMBERS + q) * 7919) % size)
const NOV_2026 = 1_793_491_200_000
const JAN_2020 = 1_577_836_800_000
/** User i of the users dimension joined i minutes after 2020-01-01. */
const userMs = (i: string) => `(${JAN_2020}::bigint + (${i})::bigint * 60000)`
/** Session i of the sessions dimension started i/2 seconds before 2026-11-01. */
const sessionMs = (i: string) => `(${NOV_2026}::bigint - (${i})::bigint * 500)`
/** Event i of the audit dimension happened i × 1.5 s before 2026-11-01. */
const eventMs = (i: string) => `(${NOV_2026}::bigint - (${i})::bigint * 1500)`

function timeSql(ms: string): string {
  return `(timestamptz 'epoch' + ${ms} * interval '1 millisecond')`
}

function uuid7Sql(ms: string, kind: number, n: string): string {
  return `(lpad(to_hex(${ms}), 12, '0') || '7${hex(kind, 3)}8' || lpad(to_hex((${n})::bigint), 15, '0'))::uuid`
}

function uuid7(ms: number, kind: number, n: number): string {
  return uuidOf(`${hex(ms, 12)}7${hex(kind, 3)}8${hex(n, 15)}`)
}

function plainUserSql(kind: number, n: string): string {
  return `('00000000-0000-4000-8${hex(kind, 3)}-' || lpad(to_hex(${n}), 12, '0'))::uuid`
}

function plainUser(kind: number, n: number): string {
  return `00000000-0000-4000-8${hex(kind, 3)}-${hex(n, 12)}`
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0')
}

function uuidOf(h: string): string {
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

// ---------------------------------------------------------------------------------------
// Measuring. The service starts fresh at each size (empty caches, first revocation poll).

const measurers: Record<Dimension, (size: number) => Promise<Row[]>> = {
  async organizations(size) {
    const tenantId = await ensureTenant('scale-orgs')
    await seedPlainUsers(tenantId, KIND.orgProbe, ORG_PROBES)
    const probe = (p: string) => plainUserSql(KIND.orgProbe, p)
    const probeOrgSql = `1 + (((p * ${ORG_MEMBERS} + q) * 7919) % ${size})`
    // Session k belongs to probe k mod 100 and is refreshed into that probe's organization
    // q = (k / 100) mod 10; its refresh token is derived from k, spent once.
    const sessionsWanted = 2 * (N + 40)
    await transaction(async (query) => {
      // The probes' memberships of this size (no foreign-key trigger while seeding).
      for (const table of ['organization_member_roles', 'organization_members']) {
        await query(
          `DELETE FROM ${table} WHERE tenant_id = $1 AND user_id IN (
             SELECT ${probe('p')} FROM generate_series(0, ${ORG_PROBES - 1}) p)`,
          [tenantId],
        )
      }
      const memberships = `SELECT md5('scale-o' || (${probeOrgSql}))::uuid AS o, ${probe('p')} AS u
        FROM generate_series(0, ${ORG_PROBES - 1}) p, generate_series(0, ${ORG_MEMBERS - 1}) q`
      await query(
        `INSERT INTO organization_members (tenant_id, organization_id, user_id, created_at)
         SELECT $1, o, u, now() FROM (${memberships}) m`,
        [tenantId],
      )
      await query(
        `INSERT INTO organization_member_roles (tenant_id, organization_id, user_id, role_id)
         SELECT $1, o, u, md5('scale-org-role')::uuid FROM (${memberships}) m`,
        [tenantId],
      )
      // The last size's sessions and their tokens (no cascade while seeding).
      await query('DELETE FROM refresh_tokens WHERE tenant_id = $1', [tenantId])
      await query('DELETE FROM sessions WHERE tenant_id = $1', [tenantId])
      const owner = probe(`(k % ${ORG_PROBES})`)
      await query(
        `INSERT INTO sessions (tenant_id, id, user_id, created_at, expires_at)
         SELECT $1, md5('scale-os' || k)::uuid, ${owner}, now(), timestamptz '2030-01-01'
         FROM generate_series(0, $2::int - 1) k`,
        [tenantId, sessionsWanted],
      )
      await query(
        `INSERT INTO refresh_tokens (tenant_id, token_hash, session_id, user_id, created_at, expires_at)
         SELECT $1, scale_refresh_hash('scale-ort-' || k), md5('scale-os' || k)::uuid, ${owner},
           now(), timestamptz '2030-01-01'
         FROM generate_series(0, $2::int - 1) k`,
        [tenantId, sessionsWanted],
      )
    })
    const org = (k: number) =>
      probeOrg(size, k % ORG_PROBES, Math.floor(k / ORG_PROBES) % ORG_MEMBERS)
    const service = await startService()
    const rows: Row[] = []
    try {
      const tokens = Array.from({ length: ORG_PROBES }, (_, p) =>
        accessToken(tenantId, plainUser(KIND.orgProbe, p), 'Member'),
      )
      let k = 0
      const next = () => {
        if (k >= sessionsWanted) throw new Error('organizations: out of refresh tokens')
        return k++
      }
      const refreshBody = (organization: boolean) => {
        const at = next()
        return {
          refreshToken: orgRefreshToken(at),
          ...(organization ? { organizationId: md5uuid(`scale-o${org(at)}`) } : {}),
        }
      }
      rows.push(
        ...(await timedTogether(size, N, [
          [
            'GET me/organizations (ten memberships)',
            (i) => ({ path: '/v1/scale-orgs/me/organizations', token: tokens[i % tokens.length] }),
          ],
          [
            'POST auth/refresh {organizationId}',
            () => ({
              method: 'POST',
              path: '/v1/scale-orgs/auth/refresh',
              body: refreshBody(true),
            }),
          ],
          [
            'POST auth/refresh (no organization)',
            () => ({
              method: 'POST',
              path: '/v1/scale-orgs/auth/refresh',
              body: refreshBody(false),
            }),
          ],
        ])),
      )
      rows[0].memberships = await count(
        'SELECT count(*) FROM organization_members WHERE tenant_id = $1',
        [tenantId],
      )
    } finally {
      await stopService(service)
    }
    return rows
  },

  async tenants(size) {
    const service = await startService()
    const rows: Row[] = []
    try {
      const token = (i: number) =>
        accessToken(md5uuid(`scale-t${i}`), md5uuid(`scale-tu${i}`), 'Admin')
      const hot = 1 + Math.floor(size / 2)
      const hotToken = token(hot)
      rows.push(
        await timed(size, 'GET /me, one tenant (cache hit)', N, () => ({
          path: `/v1/scale-t-${hot}/me`,
          token: hotToken,
        })),
      )
      // A random tenant per request: a cache miss once the tenants outnumber what the 2 s
      // cache holds (it keeps at most 10,000 slugs).
      const pick = () => 1 + Math.floor(Math.random() * size)
      rows.push(
        await timed(size, 'GET /me, random tenant', N, () => {
          const i = pick()
          return { path: `/v1/scale-t-${i}/me`, token: token(i) }
        }),
      )
      const pre = Array.from({ length: 5000 }, () => pick())
      let k = 0
      rows.push(
        await cannon(size, 'GET /me, random tenant (8 connections)', () => {
          const i = pre[k++ % pre.length]
          return { path: `/v1/scale-t-${i}/me`, token: token(i) }
        }),
      )
      rows.push(
        await timed(size, 'GET /me, unknown tenant (404)', N, () => ({
          path: `/v1/scale-nope-${Math.floor(Math.random() * 1e9)}/me`,
          token: hotToken,
          status: 404,
        })),
      )
    } finally {
      await stopService(service)
    }
    return rows
  },

  async users(size) {
    const tenantId = await ensureTenant('scale-users')
    const key = apiKeyFor(tenantId)
    const service = await startService()
    const rows: Row[] = []
    try {
      const pick = () => 1 + Math.floor(Math.random() * size)
      const userId = (i: number) => uuid7(JAN_2020 + i * 60_000, KIND.user, i)
      rows.push(
        await timed(size, 'POST auth/login (random user)', SMALL ? 20 : 60, () => ({
          method: 'POST',
          path: '/v1/scale-users/auth/login',
          body: { email: `user${pick()}@scale.test`, password: PASSWORD },
        })),
      )
      const ids = Array.from({ length: 200 }, () => userId(pick()))
      const meTokens = ids.map((id) => accessToken(tenantId, id, 'Member'))
      // SCIM's lookup of one user by address (CONTRACT §14: an index lookup, p50 within 2×
      // of GET /me), as an identity provider's provisioning client asks before each push;
      // timed in turns with GET /me, so that the ratio compares the two under one load.
      const emails = Array.from({ length: 200 }, () => `user${pick()}@scale.test`)
      const [me, scim] = await timedTogether(size, N, [
        [
          'GET /me (random user)',
          (k) => ({ path: '/v1/scale-users/me', token: meTokens[k % meTokens.length] }),
        ],
        [
          'SCIM Users?filter=userName eq (API key)',
          (k) => ({
            path: `/scim/v2/scale-users/Users?filter=${encodeURIComponent(`userName eq "${emails[k % emails.length]}"`)}`,
            token: key,
          }),
        ],
      ])
      rows.push(me)
      const ratio = scim.p50 / me.p50
      const indexes = await scimLookupPlan(tenantId, emails[0])
      scim.ratioToMe = Math.round(ratio * 100) / 100
      scim.indexes = indexes
      rows.push(scim)
      console.log(
        `    SCIM lookup p50 ${fmt(scim.p50)} ms / GET /me p50 ${fmt(me.p50)} ms = ${ratio.toFixed(2)}× (target ≤ 2×) ${ratio <= 2 ? 'PASS' : 'OVER'}; plan: ${indexes.join(', ')}`,
      )
      rows.push(
        await timed(size, 'GET users?limit=50 (API key)', N, () => ({
          path: '/v1/scale-users/users?limit=50',
          token: key,
        })),
      )
      const deep = encodeCursor(userId(Math.floor(size * 0.9)))
      rows.push(
        await timed(size, 'GET users, cursor at 90% (API key)', N, () => ({
          path: `/v1/scale-users/users?limit=50&cursor=${deep}`,
          token: key,
        })),
      )
      const cursors = Array.from({ length: 100 }, () => encodeCursor(userId(pick())))
      rows.push(
        await timed(size, 'GET users, random cursor (API key)', N, (k) => ({
          path: `/v1/scale-users/users?limit=50&cursor=${cursors[k % cursors.length]}`,
          token: key,
        })),
      )
    } finally {
      await stopService(service)
    }
    return rows
  },

  async sessions(size) {
    const tenantId = await ensureTenant('scale-sessions')
    const live = await liveRefreshTokens(tenantId, size, 2 * (N + 20) + 200)
    const service = await startService()
    const rows: Row[] = []
    try {
      let k = 0
      const next = () => {
        const i = live[k++]
        if (i === undefined) throw new Error('sessions: out of live refresh tokens')
        return refreshToken(i)
      }
      rows.push(
        await timed(size, 'POST auth/refresh', N, () => ({
          method: 'POST',
          path: '/v1/scale-sessions/auth/refresh',
          body: { refreshToken: next() },
        })),
      )
      rows.push(
        await timed(size, 'POST auth/logout', N, () => ({
          method: 'POST',
          path: '/v1/scale-sessions/auth/logout',
          body: { refreshToken: next() },
        })),
      )
    } finally {
      await stopService(service)
    }
    return rows
  },

  async audit(size) {
    const tenantId = await ensureTenant('scale-audit')
    const key = apiKeyFor(tenantId)
    const eventId = (i: number) => uuid7(NOV_2026 - i * 1500, KIND.event, i)
    const deepTime = (fraction: number) =>
      new Date(NOV_2026 - Math.floor(size * fraction) * 1500).toISOString()
    const user = plainUser(KIND.eventUser, 4242)
    const cases: [string, string][] = [
      ['GET audit?limit=50 (newest)', 'limit=50'],
      ['action=UserLogin (25%)', 'limit=50&action=UserLogin'],
      ['action=InviteExpired (1 in 50,000)', 'limit=50&action=InviteExpired'],
      ['userId (one user of 10,000)', `limit=50&userId=${user}`],
      ['userId + action', `limit=50&userId=${user}&action=UserLoginFailed`],
      ['cursor at 50%', `limit=50&cursor=${encodeCursor(eventId(Math.floor(size * 0.5)))}`],
      ['cursor at 99%', `limit=50&cursor=${encodeCursor(eventId(Math.floor(size * 0.99)))}`],
      ['before at 90%', `limit=50&before=${deepTime(0.9)}`],
      [
        'before at 90% + action=InviteExpired',
        `limit=50&before=${deepTime(0.9)}&action=InviteExpired`,
      ],
      ['search=user4242@example.com', 'limit=50&search=user4242%40example.com'],
    ]
    // Writing to the log as it grows: a logout records two events (UserLogout,
    // SessionRevoked) into the same table and indexes, the trigram one included. The
    // sessions are those of the sessions dimension, when it was seeded.
    const sessionsTenant = await one<string>(
      "SELECT id::text AS v FROM tenants WHERE slug = 'scale-sessions'",
    )
    const seededSessions = sessionsTenant
      ? await count('SELECT count(*) FROM sessions WHERE tenant_id = $1', [sessionsTenant])
      : 0
    const logouts =
      seededSessions >= 10_000
        ? await liveRefreshTokens(sessionsTenant, seededSessions, (SMALL ? 100 : 300) + 40)
        : []
    const service = await startService()
    const rows: Row[] = []
    try {
      for (const [name, query] of cases) {
        rows.push(
          await timed(size, name, SMALL ? 100 : 300, () => ({
            path: `/v1/scale-audit/audit?${query}`,
            token: key,
          })),
        )
      }
      // The same search in a small tenant: the trigram index spans every tenant, so the
      // large tenant's matches are read and filtered out.
      const small = await one<string>(
        "SELECT id::text AS v FROM tenants WHERE slug = 'scale-users'",
      )
      if (small) {
        await apiKey(small)
        rows.push(
          await timed(size, 'search=user4242@example.com, small tenant', SMALL ? 100 : 300, () => ({
            path: '/v1/scale-users/audit?limit=50&search=user4242%40example.com',
            token: apiKeyFor(small),
          })),
        )
      }
      if (logouts.length > 0) {
        rows.push(
          await timed(size, 'POST auth/logout (writes 2 events)', SMALL ? 100 : 300, (k) => ({
            method: 'POST',
            path: '/v1/scale-sessions/auth/logout',
            body: { refreshToken: refreshToken(logouts[k]) },
          })),
        )
      }
    } finally {
      await stopService(service)
    }
    return rows
  },

  async revoked(size) {
    const tenantId = await ensureTenant('scale-revoked')
    const t0 = performance.now()
    // The service reads the whole 15-minute window before it listens: startup time.
    const service = await startService()
    const startupMs = performance.now() - t0
    const rows: Row[] = []
    const revoker = startRevoker(tenantId, revocationRate(size))
    try {
      const before = await metrics()
      // The poll itself, timed here with the service's own code on a second connection:
      // the first poll (the whole window) and then a poll a second (the steady state).
      const database = await openDatabase(DB_URL, DATA_DIR)
      const cache = new RevocationCache({ db: database.db, pollMs: 1_000_000 })
      const f0 = performance.now()
      await cache.start()
      const firstPollMs = performance.now() - f0
      const polls: number[] = []
      for (let i = 0; i < (SMALL ? 3 : 8); i++) {
        await sleep(1000)
        const p0 = performance.now()
        await (cache as unknown as { poll(): Promise<void> }).poll()
        polls.push(performance.now() - p0)
      }
      await cache.stop()
      await database.close()
      polls.sort((a, b) => a - b)

      const sid = crypto.randomUUID()
      const userId = plainUser(KIND.revokedUser, 1)
      const me = await timed(size, 'GET /me while the cache holds them', N, () => ({
        path: '/v1/scale-revoked/me',
        token: accessToken(tenantId, userId, 'Member', sid),
      }))
      const after = await metrics()
      rows.push({
        ...me,
        cacheEntries: after.revocation_cache_sessions,
        cacheEntriesAtStart: before.revocation_cache_sessions,
        revokedPerSecond: Math.round(revocationRate(size)),
        rssMb: after.process_resident_memory_bytes / 2 ** 20,
        heapMb: after.nodejs_heap_size_used_bytes / 2 ** 20,
        startupMs,
        firstPollMs,
        pollP50Ms: polls[Math.floor(polls.length / 2)],
        pollMaxMs: polls.at(-1) ?? 0,
        eventLoopP99Ms: after.nodejs_eventloop_lag_p99_seconds * 1000,
      })
      rows.push(
        await cannon(size, 'GET /me (8 connections)', () => ({
          path: '/v1/scale-revoked/me',
          token: accessToken(tenantId, userId, 'Member', sid),
        })),
      )
    } finally {
      await revoker.stop()
      await stopService(service)
    }
    return rows
  },
}

/**
 * EXPLAIN (ANALYZE) of the two statements SCIM's filtered list runs (findScimUsers in
 * src/modules/scim/queries.ts: the count, then the window in creation order) for a
 * `userName eq` filter: each must read `users` through an index, never a sequential scan,
 * or the size counts as failed. Answers the indexes the plans read.
 */
async function scimLookupPlan(tenantId: string, email: string): Promise<string[]> {
  const where = 'tenant_id = $1 AND deleted_at IS NULL AND email_normalized = $2'
  const statements = [
    `SELECT count(*)::int FROM users WHERE ${where}`,
    `SELECT * FROM users WHERE ${where} ORDER BY created_at, id LIMIT 100 OFFSET 0`,
  ]
  const indexes = new Set<string>()
  for (const statement of statements) {
    const { rows } = await pool.query(`EXPLAIN (ANALYZE, COSTS OFF) ${statement}`, [
      tenantId,
      email,
    ])
    const plan = rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n')
    for (const m of plan.matchAll(/Index (?:Only )?Scan using (\S+) on users/g)) indexes.add(m[1])
    if (/Seq Scan on users/.test(plan) || !/Index (Only )?Scan using \S+ on users/.test(plan)) {
      failures++
      console.error(`    SCIM lookup is not an index lookup:\n${plan}`)
    }
  }
  return [...indexes]
}

/** Revocations a second that keep `size` sessions revoked within 15 minutes. */
function revocationRate(size: number): number {
  return size / 900
}

/**
 * Revokes live sessions of the tenant at `perSecond` (in batches, five times a second)
 * with the database's clock, as the service does, so the service's poll of the feed reads
 * what it would read at that rate.
 */
function startRevoker(tenantId: string, perSecond: number) {
  let stopped = false
  let owed = 0
  const loop = (async () => {
    while (!stopped && perSecond > 0) {
      await sleep(200)
      owed += perSecond / 5
      const n = Math.floor(owed)
      if (n === 0) continue
      owed -= n
      await sql(
        `UPDATE sessions SET revoked_at = clock_timestamp(), revoke_reason = 'logout'
         WHERE tenant_id = $1 AND id IN (
           SELECT id FROM sessions WHERE tenant_id = $1 AND revoked_at IS NULL LIMIT $2)`,
        [tenantId, n],
      )
    }
  })()
  return {
    async stop() {
      stopped = true
      await loop
    },
  }
}

// ---------------------------------------------------------------------------------------
// The service, and timing requests against it.

function startService(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...START_ARGS], {
    env: {
      ...process.env,
      PORT: String(PORT),
      DATABASE_URL: DB_URL,
      REDIS_URL: '',
      DATA_DIR,
      LOG_LEVEL: 'warn',
      PUBLIC_URL,
      JWT_SECRET,
      METRICS_TOKEN,
      RATE_LIMIT_TENANT_CREATION: '1000000/60',
      RATE_LIMIT_SIGNUP: '1000000/60',
      RATE_LIMIT_TOKEN_ENDPOINTS: '100000000/60',
      RATE_LIMIT_ADMIN_REQUESTS: '100000000/60',
      RATE_LIMIT_LOGIN_FAILURES_PER_IP: '100000000/60',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  running.add(child)
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the service exited (${code})`))),
  )
  exited.catch(() => {})
  return Promise.race([ready().then(() => child), exited])
}

// Stopped half-way (Ctrl-C, kill): the service goes too.
const running = new Set<ChildProcess>()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of running) child.kill('SIGTERM')
    process.exit(130)
  })
}

async function stopService(child: ChildProcess): Promise<void> {
  running.delete(child)
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

async function ready(): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    try {
      const res = await fetch(`${BASE}/ready`)
      if (res.status === 200) return
    } catch {}
    await sleep(50)
  }
  throw new Error('the service did not become ready in 60 s')
}

async function metrics(): Promise<Record<string, number>> {
  const res = await fetch(`${BASE}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  const out: Record<string, number> = {}
  for (const line of (await res.text()).split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})? ([-+0-9.eE]+|NaN)$/.exec(line)
    if (m && !(m[1] in out)) out[m[1]] = Number(m[2])
  }
  return out
}

interface Req {
  method?: 'GET' | 'POST'
  path: string
  token?: string
  body?: unknown
  status?: number
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

function send(req: Req): Promise<{ status: number; body: string }> {
  const body = req.body === undefined ? undefined : JSON.stringify(req.body)
  return new Promise((resolve, reject) => {
    const r = http.request(
      `${BASE}${req.path}`,
      {
        agent,
        method: req.method ?? 'GET',
        headers: {
          ...(req.token ? { authorization: `Bearer ${req.token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (c: Buffer) => parts.push(c))
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') }),
        )
        res.on('error', reject)
      },
    )
    r.on('error', reject)
    r.end(body)
  })
}

/** `n` sequential requests (after a few not counted): p50 and p99 in ms. */
async function timed(
  size: number,
  route: string,
  n: number,
  make: (k: number) => Req,
): Promise<Row> {
  const [row] = await timedTogether(size, n, [[route, make]])
  return row
}

/**
 * `n` requests of each route, the routes taking turns (one of each, then again), so that
 * routes compared with each other meet the same neighbours' load: a row each.
 */
async function timedTogether(
  size: number,
  n: number,
  routes: [route: string, make: (k: number) => Req][],
): Promise<Row[]> {
  const warm = Math.min(20, Math.ceil(n / 10))
  const times = routes.map((): number[] => [])
  const wrong = routes.map(() => 0)
  const examples = routes.map(() => '')
  for (let k = 0; k < warm + n; k++) {
    for (const [r, [, make]] of routes.entries()) {
      const req = make(k)
      const t0 = performance.now()
      const res = await send(req)
      const ms = performance.now() - t0
      if (res.status !== (req.status ?? 200)) {
        wrong[r]++
        examples[r] ||= `${res.status} ${res.body.slice(0, 200)}`
      }
      if (k >= warm) times[r].push(ms)
    }
  }
  return routes.map(([route], r) => {
    if (wrong[r] > 0) {
      failures++
      console.error(`    ${route}: ${wrong[r]} unexpected answers, e.g. ${examples[r]}`)
    }
    times[r].sort((a, b) => a - b)
    return { size, route, p50: pct(times[r], 0.5), p99: pct(times[r], 0.99), n }
  })
}

/** A short autocannon run with 8 connections: req/s, and its (whole-ms) p50/p99. */
async function cannon(size: number, route: string, make: () => Req): Promise<Row> {
  const result = await autocannon({
    url: BASE,
    connections: 8,
    duration: AUTOCANNON_SECONDS,
    requests: [
      {
        setupRequest: (req: any) => {
          const r = make()
          return {
            ...req,
            method: r.method ?? 'GET',
            path: r.path,
            headers: { ...req.headers, authorization: `Bearer ${r.token}` },
          }
        },
      },
    ],
  })
  if (result.non2xx > 0 || result.errors > 0) {
    failures++
    console.error(`    ${route}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  }
  return {
    size,
    route,
    p50: result.latency.p50,
    p99: result.latency.p99,
    n: result.requests.total,
    rps: result.requests.total / AUTOCANNON_SECONDS,
  }
}

function accessToken(tenantId: string, userId: string, role: string, sid?: string): string {
  const iat = Math.floor(Date.now() / 1000)
  return sign({
    iss: PUBLIC_URL,
    aud: `${PUBLIC_URL}/v1`,
    sub: userId,
    tid: tenantId,
    role,
    sid: sid ?? crypto.randomUUID(),
    jti: crypto.randomUUID(),
    iat,
    exp: iat + 900,
  })
}

/** The refresh token of seeded session i (its hash is scale_refresh_hash('scale-rt-' || i)). */
function refreshToken(i: number): string {
  return createHash('sha256').update(`scale-rt-${i}`).digest('base64url')
}

/** The refresh token of the organizations dimension's session k ('scale-ort-' || k). */
function orgRefreshToken(k: number): string {
  return createHash('sha256').update(`scale-ort-${k}`).digest('base64url')
}

/** `want` random seeded sessions whose refresh token is still live (not spent, not ended). */
async function liveRefreshTokens(tenantId: string, size: number, want: number): Promise<number[]> {
  const candidates = [
    ...new Set(Array.from({ length: want * 2 }, () => 1 + Math.floor(Math.random() * size))),
  ]
  const { rows } = await pool.query(
    `SELECT i FROM unnest($2::int[]) i
     JOIN refresh_tokens rt ON rt.tenant_id = $1 AND rt.token_hash = scale_refresh_hash('scale-rt-' || i)
     JOIN sessions s ON s.tenant_id = $1 AND s.id = rt.session_id
     WHERE rt.used_at IS NULL AND s.revoked_at IS NULL`,
    [tenantId, candidates],
  )
  const live = rows.map((r: { i: number }) => r.i)
  if (live.length < want) throw new Error(`sessions: only ${live.length} live tokens of ${want}`)
  return live.slice(0, want)
}

/** A deterministic API key of the tenant (inserted when missing). */
function apiKeyFor(tenantId: string): string {
  return `ak_live_${createHash('sha256').update(`scale-key-${tenantId}`).digest('base64url')}`
}

async function apiKey(tenantId: string): Promise<void> {
  const key = apiKeyFor(tenantId)
  await sql(
    `INSERT INTO api_keys (tenant_id, id, name, environment, prefix, key_hash, created_at)
     VALUES ($1, gen_random_uuid(), 'scale bench', 'live', $2, $3, now())
     ON CONFLICT DO NOTHING`,
    [tenantId, key.slice(0, 12), hashToken(key)],
  )
}

async function ensureTenant(slug: string): Promise<string> {
  await sql(
    `INSERT INTO tenants (id, slug, name, created_at, updated_at)
     VALUES (md5($1)::uuid, $1, $1, now(), now()) ON CONFLICT DO NOTHING`,
    [slug],
  )
  return one<string>('SELECT id::text AS v FROM tenants WHERE slug = $1', [slug])
}

// ---------------------------------------------------------------------------------------
// Database plumbing.

/** Runs `work` in one transaction on one connection of the pool. */
async function transaction(
  work: (query: (text: string, params: unknown[]) => Promise<unknown>) => Promise<void>,
): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await work((text, params) => client.query(text, params))
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

async function sql(text: string, params: unknown[] = []): Promise<void> {
  if (params.length === 0) await pool.query(text)
  else await pool.query(text, params)
}

async function one<T>(text: string, params: unknown[] = []): Promise<T> {
  const { rows } = await pool.query(text, params)
  return rows[0]?.v as T
}

async function count(text: string, params: unknown[] = []): Promise<number> {
  const { rows } = await pool.query(text, params)
  return Number(rows[0].count)
}

/** Calls `insert(from, to)` for chunks of at most `chunk` rows numbered have+1 … size. */
async function chunks(
  have: number,
  size: number,
  chunk: number,
  insert: (from: number, to: number) => Promise<void>,
  tables: string[] = [],
): Promise<void> {
  // A load at least as large as what is there, and large, is faster with the table's
  // plain indexes dropped and built again afterwards (the trigram index above all).
  if (tables.length > 0 && size - have >= 500_000 && size - have >= have) {
    await withoutIndexes(tables, () => chunks(have, size, chunk, insert))
    return
  }
  const t0 = performance.now()
  for (let from = have + 1; from <= size; from += chunk) {
    const to = Math.min(size, from + chunk - 1)
    await insert(from, to)
    inserted += to - from + 1
    if (size - have > chunk) {
      const s = (performance.now() - t0) / 1000
      console.log(`    ${fmtInt(to)} / ${fmtInt(size)} (${s.toFixed(0)} s)`)
    }
  }
}

/**
 * Runs `load` with the tables' plain indexes (not those of a primary key or unique
 * constraint) dropped, then builds them again from their recorded definitions. The
 * definitions are kept in scale_dropped_indexes until rebuilt, so a run that was stopped
 * half-way has them rebuilt by the next (restoreIndexes, at start).
 */
async function withoutIndexes(tables: string[], load: () => Promise<void>): Promise<void> {
  await sql(
    `INSERT INTO scale_dropped_indexes (name, definition)
     SELECT i.indexname, i.indexdef FROM pg_indexes i
     WHERE i.schemaname = 'public' AND i.tablename = ANY($1::text[])
       AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)
     ON CONFLICT DO NOTHING`,
    [tables],
  )
  const { rows } = await pool.query('SELECT name FROM scale_dropped_indexes')
  for (const { name } of rows) await sql(`DROP INDEX IF EXISTS "${name}"`)
  console.log(`    (indexes dropped for the load: ${rows.map((r) => r.name).join(', ')})`)
  await load()
  await restoreIndexes()
}

async function restoreIndexes(): Promise<void> {
  const { rows } = await pool.query('SELECT name, definition FROM scale_dropped_indexes')
  // Side by side (one connection each): the trigram index takes longest, the others build
  // on the other core meanwhile.
  await Promise.all(
    rows.map(async ({ name, definition }) => {
      const t0 = performance.now()
      await sql(definition.replace(/^CREATE (UNIQUE )?INDEX /, 'CREATE $1INDEX IF NOT EXISTS '))
      await sql('DELETE FROM scale_dropped_indexes WHERE name = $1', [name])
      console.log(`    index ${name} built in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    }),
  )
}

function md5uuid(text: string): string {
  return uuidOf(createHash('md5').update(text).digest('hex'))
}

function migrate(): void {
  const r = spawnSync(process.execPath, ['scripts/migrate.ts'], {
    env: { ...process.env, DATABASE_URL: DB_URL, DATA_DIR },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  if (r.status !== 0) throw new Error('migrations failed')
}

async function ensureDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  await onServer(url, async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`)
  })
}

async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1)
  await onServer(url, (client) =>
    client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '')}" WITH (FORCE)`),
  )
}

async function onServer(url: string, work: (client: pg.Client) => Promise<unknown>) {
  const admin = new URL(url)
  admin.pathname = '/postgres'
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  try {
    await work(client)
  } finally {
    await client.end()
  }
}

// ---------------------------------------------------------------------------------------
// Sizes, output.

function sizesFor(): Record<Dimension, number[]> {
  const out = { ...FULL_SIZES }
  if (SMALL) for (const d of DIMENSIONS) out[d] = [FULL_SIZES[d][0]]
  for (const part of (process.env.SCALE_SIZES ?? '').split(';').filter(Boolean)) {
    const [name, list] = part.split('=')
    if (!DIMENSIONS.includes(name as Dimension)) throw new Error(`SCALE_SIZES: unknown ${name}`)
    out[name as Dimension] = list.split(',').map((s) => Math.round(Number(s)))
  }
  return out
}

function printTables(): void {
  for (const dimension of DIMENSIONS) {
    const result = results[dimension]
    if (!result) continue
    console.log(`\n${dimension}`)
    const revoked = dimension === 'revoked'
    const head = ['size', 'route', 'p50 ms', 'p99 ms', 'req/s']
    if (revoked)
      head.push(
        'cache entries',
        'RSS MB',
        'heap MB',
        'start ms',
        'first poll ms',
        'poll p50/max ms',
      )
    const rows = result.rows.map((r) => {
      const cells = [fmtInt(r.size), r.route, fmt(r.p50), fmt(r.p99), r.rps ? fmtInt(r.rps) : '']
      if (revoked && r.cacheEntries === undefined) cells.push('', '', '', '', '', '')
      else if (revoked) {
        cells.push(
          fmtInt(r.cacheEntries as number),
          fmt(r.rssMb as number),
          fmt(r.heapMb as number),
          fmtInt(r.startupMs as number),
          fmtInt(r.firstPollMs as number),
          `${fmt(r.pollP50Ms as number)} / ${fmt(r.pollMaxMs as number)}`,
        )
      }
      return cells
    })
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
    const line = (cells: string[]) =>
      cells.map((c, i) => (i === 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
    console.log(line(head))
    for (const r of rows) console.log(line(r))
  }
}

function writeResults(announce = true): void {
  mkdirSync('bench/results', { recursive: true })
  const date = new Date().toISOString().slice(0, 10)
  const file = `bench/results/scale-${date}${SMALL ? '-small' : ''}.json`
  // The day's earlier runs are kept: a dimension's rows at sizes not measured now stay.
  let previous: { dimensions?: typeof results } = {}
  try {
    previous = JSON.parse(readFileSync(file, 'utf8'))
  } catch {}
  const dimensions = { ...previous.dimensions }
  for (const [name, now] of Object.entries(results)) {
    const before = dimensions[name as Dimension]
    const measured = new Set(now.rows.map((r) => r.size))
    dimensions[name as Dimension] = {
      rows: [...(before?.rows ?? []).filter((r) => !measured.has(r.size)), ...now.rows].sort(
        (a, b) => a.size - b.size,
      ),
      seedSeconds: { ...before?.seedSeconds, ...now.seedSeconds },
    }
  }
  const out = {
    machine: { cores: availableParallelism(), memoryGiB: Math.round(totalmem() / 2 ** 30) },
    postgres: DB_URL.replace(/\/\/[^@]*@/, '//'),
    mode: MODE,
    date: new Date().toISOString(),
    dimensions,
  }
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`)
  if (announce) console.log(`\nwrote ${file}`)
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  return n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0)
}

function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en')
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms))
}

await main()
