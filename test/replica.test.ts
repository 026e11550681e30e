// CONTRACT §15, DATABASE_READ_URL: a real streaming replica (pg_basebackup of a private
// cluster, never the machine's PostgreSQL). Reads that may lag go to it only when it has
// caught up, so a caller always sees what it just wrote; a replica that lags or is down is
// bypassed, and /ready reports it without failing.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { query } from './faults/invariants.ts'
import { PgCluster } from './faults/procs.ts'
import {
  createTenant,
  eventually,
  signup,
  startServer,
  type TestServer,
  uniqueEmail,
} from './helpers.ts'

/** How long a state may take to show: far more than it needs, for a busy machine. */
const WAIT = 20_000

let primary: PgCluster
let replica: PgCluster
let server: TestServer
const served = { replica: 0, primary: 0 }

before(async () => {
  primary = await PgCluster.create()
  replica = await PgCluster.replicaOf(primary)
  server = await startServer({
    databaseUrl: primary.url,
    databaseReadUrl: replica.url,
    databaseReadMaxLagMs: 300,
    redisUrl: undefined,
  })
  const metrics = server.deps.reads.onRead
  server.deps.reads.onRead = (where) => {
    served[where]++
    metrics?.(where)
  }
})

after(async () => {
  await server?.close()
  await replica?.destroy()
  await primary?.destroy()
})

async function replicaCheck(): Promise<string> {
  const res = await server.request('GET', '/ready')
  assert.equal(res.status, 200, 'the replica never fails readiness')
  return res.body.checks.replica
}

async function listedEmails(slug: string, token: string): Promise<string[]> {
  const res = await server.request('GET', `/v1/${slug}/users?limit=100`, undefined, { token })
  assert.equal(res.status, 200)
  return res.body.items.map((u: { email: string }) => u.email)
}

test('replica: a caught-up replica serves lists, and every write is seen by the next read', async () => {
  assert.ok(
    await eventually(async () => (await replicaCheck()) === 'ok', WAIT),
    '/ready: replica ok',
  )
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  for (let i = 0; i < 15; i++) {
    const { email } = await signup(server, tenant.slug, uniqueEmail(`ryw${i}`))
    assert.ok((await listedEmails(tenant.slug, token)).includes(email), `write ${i} seen at once`)
    const audit = await server.request('GET', `/v1/${tenant.slug}/audit?limit=5`, undefined, {
      token,
    })
    assert.ok(
      audit.body.items.some(
        (e: { action: string; userEmail: string }) =>
          e.action === 'UserSignup' && e.userEmail === email,
      ),
      `audit of write ${i} seen at once`,
    )
  }
  const before = served.replica
  assert.ok(
    await eventually(async () => {
      await listedEmails(tenant.slug, token)
      return served.replica > before
    }, WAIT),
    'an idle, caught-up replica serves the read',
  )
})

test('replica: one whose replay is paused is bypassed at once and reported lagging', async () => {
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  await query(replica.url, 'SELECT pg_wal_replay_pause()')
  try {
    const fromReplica = served.replica
    const { email } = await signup(server, tenant.slug, uniqueEmail('paused'))
    assert.ok((await listedEmails(tenant.slug, token)).includes(email), 'the primary answered')
    assert.equal(served.replica, fromReplica, 'the stale replica served nothing')
    assert.ok(
      await eventually(async () => (await replicaCheck()) === 'lagging', WAIT),
      '/ready: lagging',
    )
  } finally {
    await query(replica.url, 'SELECT pg_wal_replay_resume()')
  }
  assert.ok(
    await eventually(async () => (await replicaCheck()) === 'ok', WAIT),
    'ok once it replays',
  )
})

test('replica: one that is down is bypassed; /ready says down and stays 200', async () => {
  const tenant = await createTenant(server)
  const token = tenant.admin.accessToken
  await replica.stop('fast')
  try {
    const { email } = await signup(server, tenant.slug, uniqueEmail('down'))
    assert.ok((await listedEmails(tenant.slug, token)).includes(email), 'the primary answered')
    const exported = await fetch(`${server.url}/v1/${tenant.slug}/audit/export`, {
      headers: { authorization: `Bearer ${token}` },
    })
    assert.equal(exported.status, 200)
    assert.match(await exported.text(), /"UserSignup"/)
    assert.ok(await eventually(async () => (await replicaCheck()) === 'down', WAIT), '/ready: down')
  } finally {
    await replica.start()
  }
  assert.ok(await eventually(async () => (await replicaCheck()) === 'ok', WAIT), 'back: ok')
})
