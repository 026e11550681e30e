// DATABASE_READ_URL (CONTRACT §15) on a real streaming replica (pg_basebackup -R of a private
// primary): the users list and the audit log are read there while it keeps up; a caller
// always sees its own writes (a replica paused behind them is bypassed); a replica more than
// DATABASE_READ_MAX_LAG_MS behind is `lagging`, one that is gone `down`, and /ready stays
// 200 through both.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { callSure, createTenant, expectStatus, signup, type Tenant } from '../faults/client.ts'
import { query } from '../faults/invariants.ts'
import { sleep, until } from '../faults/load.ts'
import { freePort, PgCluster, Service } from '../faults/procs.ts'

const SKIP = process.env.TOPOLOGY_SUITE === '1' ? false : 'topology: npm run test:topology'

let primary: PgCluster
let replica: PgCluster
let service: Service
let tenant: Tenant
const scratch = mkdtempSync(join(tmpdir(), 'topology-replica-'))

before(async () => {
  if (SKIP) return
  primary = await PgCluster.create()
  replica = await PgCluster.replicaOf(primary)
  const port = await freePort()
  service = new Service(port, {
    PATH: process.env.PATH ?? '',
    NODE_COMPILE_CACHE: join('node_modules', '.cache', 'node-compile-cache'),
    PORT: String(port),
    DATABASE_URL: primary.url,
    DATABASE_READ_URL: replica.url,
    DATABASE_READ_MAX_LAG_MS: '1000',
    PUBLIC_URL: 'http://auth.replica.test',
    LOG_LEVEL: 'warn',
    DATA_DIR: join(scratch, 'data'),
    TRUST_PROXY: 'true',
    WEBHOOK_WORKER: 'false',
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
  })
  await service.waitReady()
  tenant = await createTenant(service.base)
})

after(async () => {
  if (SKIP) return
  await service?.kill('SIGKILL')
  await replica?.destroy()
  await primary?.destroy()
  rmSync(scratch, { recursive: true, force: true })
})

const ready = () => callSure(service.base, 'GET', '/ready')

/** When the replica last began the users list's statement (its own pg_stat_activity). */
async function replicaListedAt(): Promise<number> {
  const [row] = await query(
    replica.url,
    `SELECT max(query_start) AS at FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND query LIKE '%FROM users WHERE tenant_id = $1 AND deleted_at IS NULL%'`,
  )
  return row?.at ? new Date(row.at).getTime() : 0
}

async function listedIds(): Promise<string[]> {
  const res = await callSure(service.base, 'GET', `/v1/${tenant.slug}/users?limit=200`, {
    token: tenant.adminToken,
  })
  expectStatus(res, 200, 'users list')
  return res.body.items.map((u: { id: string }) => u.id)
}

test('lists are read on the replica while it keeps up; a caller always sees its own writes', {
  skip: SKIP,
}, async () => {
  assert.ok(
    await until(async () => (await ready()).body.checks?.replica === 'ok', 10_000, 200),
    'the replica is ok',
  )
  // Caught up: the list is the replica's (its own statistics count the scans).
  await sleep(300)
  const before = await replicaListedAt()
  for (let i = 0; i < 3; i++) await listedIds()
  assert.ok((await replicaListedAt()) > before, 'the users list was read on the replica')
  const audit = await callSure(service.base, 'GET', `/v1/${tenant.slug}/audit?limit=5`, {
    token: tenant.adminToken,
  })
  expectStatus(audit, 200, 'audit list')

  // Replay paused: the replica stays behind the writes; each is seen at once all the same.
  await query(replica.url, 'SELECT pg_wal_replay_pause()')
  try {
    for (let i = 0; i < 3; i++) {
      const user = await signup(service.base, tenant.slug)
      const listedBefore = await replicaListedAt()
      assert.ok((await listedIds()).includes(user.userId), 'a new user is in the next list')
      assert.equal(await replicaListedAt(), listedBefore, 'read on the primary, not the replica')
    }
    assert.ok(
      await until(async () => (await ready()).body.checks?.replica === 'lagging', 20_000, 200),
      'a replica past DATABASE_READ_MAX_LAG_MS is lagging',
    )
    const res = await ready()
    assert.equal(res.status, 200, '/ready stays 200 with the replica lagging')
  } finally {
    await query(replica.url, 'SELECT pg_wal_replay_resume()')
  }
  assert.ok(
    await until(async () => (await ready()).body.checks?.replica === 'ok', 10_000, 200),
    'caught up again: ok',
  )
})

test('a replica that is gone is down, /ready stays 200, and lists come from the primary', {
  skip: SKIP,
}, async () => {
  await replica.stop('immediate')
  assert.ok(
    await until(async () => (await ready()).body.checks?.replica === 'down', 10_000, 200),
    'a stopped replica is down',
  )
  const res = await ready()
  assert.equal(res.status, 200)
  assert.equal(res.body.checks.database, 'ok')
  const user = await signup(service.base, tenant.slug)
  assert.ok((await listedIds()).includes(user.userId))
  await replica.start()
  assert.ok(
    await until(async () => (await ready()).body.checks?.replica === 'ok', 20_000, 200),
    'back and caught up: ok',
  )
})
