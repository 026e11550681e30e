// The audit log on a tenant with a million events (issue 4: every filtered GET audit
// answers in under 50 ms). Seeds the tenant `bench-audit` with 1,000,000 events through
// INSERT … SELECT generate_series (in PostgreSQL when DATABASE_URL is set, else in a
// throw-away PGlite), then times each filtered query twice: the service call alone (the
// SQL the route runs) and the whole HTTP request through the app with an API key. Ends
// with the EXPLAIN (ANALYZE, BUFFERS) plan of every query. Always exits 0: it reports.
//
//   DATABASE_URL=postgres://… node bench/audit.ts [--reseed]
//   AUDIT_BENCH_EVENTS=200000 node bench/audit.ts      (a smaller log, for a quick look)
//
// In PostgreSQL the seeded tenant is kept, so the next run starts timing at once;
// --reseed rebuilds it. Remove it with: DELETE FROM tenants WHERE slug = 'bench-audit'
// (then DELETE FROM audit_events WHERE tenant_id = <its id>).

import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { openDatabase } from '../src/db/client.ts'
import { sql } from '../src/db/orm.ts'
import { apiKeys } from '../src/db/schema.ts'
import type { Deps } from '../src/deps.ts'
import { hashToken, randomToken } from '../src/lib/crypto.ts'
import { encodeCursor } from '../src/lib/cursor.ts'
import { uuidv7 } from '../src/lib/ids.ts'
import { type AuditQuery, auditPageQuery, listAuditPage } from '../src/modules/audit/service.ts'

const EVENTS = Number(process.env.AUDIT_BENCH_EVENTS ?? 1_000_000)
const CHUNK = 100_000
const USERS = 10_000
const RUNS = 25
const TARGET_MS = 50
const SLUG = 'bench-audit'
const DATA_DIR = '/tmp/tenant-auth-bench-audit'

const url = process.env.DATABASE_URL || 'memory://'
const kind = url.startsWith('postgres') ? 'PostgreSQL' : 'PGlite (memory)'
const database = await openDatabase(url, DATA_DIR)
await database.migrate()
const db = database.db

type Rows<T> = { rows: T[] }
async function query<T>(statement: ReturnType<typeof sql>): Promise<T[]> {
  return ((await db.execute(statement)) as unknown as Rows<T>).rows
}

// 1. The tenant and its events.
const tenantId = await ensureTenant()
const [{ n: present }] = await query<{ n: number }>(
  sql`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = ${tenantId}`,
)
if (present !== EVENTS || process.argv.includes('--reseed')) await seed(tenantId)
else console.log(`audit bench: ${kind}, reusing ${present.toLocaleString('en')} seeded events`)

// 2. What the queries ask for.
const [{ uid: someUser }] = await query<{ uid: string }>(sql`SELECT md5('user4242')::uuid AS uid`)
const middle = await query<{ id: string; created_at: Date | string }>(sql`
  SELECT id, created_at FROM audit_events WHERE tenant_id = ${tenantId}
  ORDER BY created_at DESC NULLS LAST, id DESC NULLS LAST OFFSET ${Math.floor(EVENTS / 2)} LIMIT 1`)
const midCursor = encodeCursor(middle[0].id)
const midTime = new Date(middle[0].created_at).toISOString()
const deps = { db } as Deps
const firstPage = await listAuditPage(deps, tenantId, { limit: 50 })

const cases: [string, AuditQuery][] = [
  ['newest page (no filter)', { limit: 50 }],
  ['limit=200', { limit: 200 }],
  ['page 2 (cursor)', { limit: 50, cursor: firstPage.nextCursor ?? undefined }],
  [`page at event ${(EVENTS / 2).toLocaleString('en')} (cursor)`, { limit: 50, cursor: midCursor }],
  ['action=UserLogin (25%)', { limit: 50, action: 'UserLogin' }],
  ['action=PasswordlessCodeFailed (0.1%)', { limit: 50, action: 'PasswordlessCodeFailed' }],
  ['action=InviteExpired (20 events)', { limit: 50, action: 'InviteExpired' }],
  ['userId (one user of 10,000)', { limit: 50, userId: someUser }],
  ['userId + action', { limit: 50, userId: someUser, action: 'UserLoginFailed' }],
  ['before (mid-log)', { limit: 50, before: midTime }],
  ['before + action=InviteExpired', { limit: 50, before: midTime, action: 'InviteExpired' }],
  ['search=user4242@example.com (rare)', { limit: 50, search: 'user4242@example.com' }],
  ['search=invalid_credentials (10%)', { limit: 50, search: 'invalid_credentials' }],
  ['search=MfaTotp (5%)', { limit: 50, search: 'MfaTotp' }],
  ['search=no-such-thing (none)', { limit: 50, search: 'no-such-thing' }],
  ['search=zq (short, none: one window)', { limit: 50, search: 'zq' }],
  ['search + action', { limit: 50, search: 'passwordless', action: 'UserLogin' }],
  ['search + userId', { limit: 50, search: 'passwordless', userId: someUser }],
  [
    'action + userId + before + search',
    { limit: 50, action: 'UserLogin', userId: someUser, before: midTime, search: 'password' },
  ],
]

// 3. The app, to time whole HTTP requests with an API key of the tenant.
const config = loadConfig({
  ...process.env,
  NODE_ENV: 'development',
  DATA_DIR,
  DATABASE_URL: url,
  LOG_LEVEL: 'warn',
})
const { app } = await buildApp(config, { database, migrate: false, logger: false })
const key = `ak_live_${randomToken()}`
const now = new Date()
await db.insert(apiKeys).values({
  tenantId,
  id: uuidv7(now.getTime()),
  name: 'audit bench',
  environment: 'live',
  prefix: key.slice(0, 12),
  keyHash: hashToken(key),
  createdAt: now,
  expiresAt: new Date(now.getTime() + 3_600_000),
})

console.log(
  `\nGET /v1/${SLUG}/audit on ${EVENTS.toLocaleString('en')} events (${kind}); ${RUNS} runs each after a warm-up, in ms; target: median of the whole HTTP request < ${TARGET_MS}\n`,
)
const header = ['query', 'rows', 'sql p50', 'sql p95', 'http p50', 'http p95', '']
const table: string[][] = []
let misses = 0
for (const [name, q] of cases) {
  const sqlTimes = await time(() => listAuditPage(deps, tenantId, q))
  const params = Object.entries(q).filter(([, v]) => v !== undefined)
  const http = `/v1/${SLUG}/audit?${new URLSearchParams(params.map(([k, v]) => [k, String(v)]))}`
  let rows = 0
  const httpTimes = await time(async () => {
    const res = await app.inject({
      method: 'GET',
      url: http,
      headers: { authorization: `Bearer ${key}` },
    })
    if (res.statusCode !== 200) throw new Error(`${http}: ${res.statusCode} ${res.body}`)
    rows = (JSON.parse(res.body) as { items: unknown[] }).items.length
  })
  const ok = pct(httpTimes, 0.5) < TARGET_MS
  if (!ok) misses++
  table.push([
    name,
    String(rows),
    fmt(pct(sqlTimes, 0.5)),
    fmt(pct(sqlTimes, 0.95)),
    fmt(pct(httpTimes, 0.5)),
    fmt(pct(httpTimes, 0.95)),
    ok ? 'ok' : 'SLOW',
  ])
}
printTable(header, table)
console.log(
  misses === 0
    ? `\nEvery query answered within ${TARGET_MS} ms (median of the whole HTTP request).`
    : `\n${misses} of ${cases.length} queries missed ${TARGET_MS} ms (median).`,
)

console.log('\nQuery plans (EXPLAIN ANALYZE, BUFFERS):')
for (const [name, q] of cases) {
  const { statement, until } = await auditPageQuery(db, tenantId, q)
  const plan = await query<Record<string, string>>(
    sql`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${statement}`,
  )
  console.log(`\n-- ${name}${until ? ` (search window ends at event ${until.id})` : ''}`)
  for (const line of plan) console.log(`   ${Object.values(line)[0]}`)
}

await db.delete(apiKeys).where(sql`${apiKeys.keyHash} = ${hashToken(key)}`)
await app.close()
await database.close()
process.exit(0)

async function ensureTenant(): Promise<string> {
  const found = await query<{ id: string }>(sql`SELECT id FROM tenants WHERE slug = ${SLUG}`)
  if (found[0]) return found[0].id
  const id = uuidv7()
  await db.execute(sql`
    INSERT INTO tenants (id, slug, name, created_at, updated_at)
    VALUES (${id}, ${SLUG}, 'Audit bench', now(), now())`)
  return id
}

/**
 * A year of events: about 10,000 users, a realistic mix of actions (sessions and logins
 * most, the three Passwordless* actions, a few rare ones), emails and metadata to search.
 */
async function seed(id: string): Promise<void> {
  console.log(`audit bench: ${kind}, seeding ${EVENTS.toLocaleString('en')} events…`)
  const started = performance.now()
  await db.execute(sql`DELETE FROM audit_events WHERE tenant_id = ${id}`)
  for (let from = 1; from <= EVENTS; from += CHUNK) {
    const to = Math.min(EVENTS, from + CHUNK - 1)
    await db.execute(sql`
      INSERT INTO audit_events
        (tenant_id, id, action, actor_type, actor_id, user_id, email, ip, user_agent, metadata, created_at)
      SELECT ${id}::uuid,
        (lpad(to_hex((extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7' || substr(h, 1, 3)
          || '8' || substr(h, 4, 15))::uuid,
        action,
        CASE WHEN action IN ('UserLoginFailed', 'PasswordlessCodeFailed') THEN 'anonymous' ELSE 'user' END,
        CASE WHEN action IN ('UserLoginFailed', 'PasswordlessCodeFailed') THEN NULL ELSE uid::text END,
        uid, email, '10.' || (u % 250) || '.' || (i % 250) || '.' || (i % 7 + 1),
        'Mozilla/5.0 (bench) Safari/605.1.15',
        CASE
          WHEN action IN ('SessionCreated', 'SessionRevoked')
            THEN jsonb_build_object('sessionId', md5('s' || i)::uuid)
          WHEN action = 'UserLoginFailed'
            THEN jsonb_build_object('email', email, 'reason', 'invalid_credentials')
          WHEN action = 'UserLogin'
            THEN jsonb_build_object('via', CASE WHEN i % 5 = 0 THEN 'passwordless' ELSE 'password' END)
          ELSE '{}'::jsonb
        END,
        ts
      FROM (
        SELECT i, h, u, md5('user' || u)::uuid AS uid, 'user' || u || '@example.com' AS email,
          timestamptz '2025-01-01' + (i * (31536000000 / ${EVENTS})::bigint) * interval '1 millisecond' AS ts,
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
          SELECT i, md5(i::text) AS h, (hashint4(i + 7)::bigint & 2147483647) % ${USERS} AS u
          FROM generate_series(${from}::int, ${to}::int) AS i
        ) s
      ) r`)
    process.stdout.write(
      `  ${to.toLocaleString('en')} (${fmt((performance.now() - started) / 1000)} s)\n`,
    )
  }
  await db.execute(sql`VACUUM ANALYZE audit_events`)
  console.log(`  seeded and analysed in ${fmt((performance.now() - started) / 1000)} s`)
}

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 3; i++) await fn()
  const out: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await fn()
    out.push(performance.now() - t0)
  }
  return out.sort((a, b) => a - b)
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]
}

function fmt(n: number): string {
  return n < 10 ? n.toFixed(2) : n.toFixed(1)
}

function printTable(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  console.log(line(head))
  for (const r of rows) console.log(line(r))
}
