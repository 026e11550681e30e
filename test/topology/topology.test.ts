// Several machines on real engines (CONTRACT §15), npm run test:topology: three instances
// behind HAProxy, on PostgreSQL through PgBouncer in transaction mode and on Redis through
// Sentinel (world.ts). In order:
//   1. CONTRACT §4 across the three: a revoked session is refused on every instance within
//      5 s, refresh-token reuse is caught whichever instance sees it, and a rate limit counts
//      the attempts of all three.
//   2. A mixed load through HAProxy (sign-ins, refreshes, /me, admin writes and reads), one
//      instance SIGKILLed in its middle: only the requests in flight at the kill fail, and
//      every acknowledged change is kept (the SQL invariants of test/faults hold too).
//   3. The Redis master SIGKILLed: Sentinel promotes the replica, the instances follow within
//      10 s (the revocation channel subscribed and the limits counting on the new master),
//      /ready answers 200 all along, and the rules of step 1 hold again.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import {
  call,
  callSure,
  createTenant,
  expectStatus,
  inBatches,
  ms,
  PASSWORD,
  type Reply,
  randomIp,
  type Session,
  sessionOf,
  signup,
  type Tenant,
} from '../faults/client.ts'
import { checkInvariants, query } from '../faults/invariants.ts'
import { Load, pick, sleep, statusSummary, until } from '../faults/load.ts'
import { LOGIN_FAILURES, Topology } from './world.ts'

const SKIP = process.env.TOPOLOGY_SUITE === '1' ? false : 'topology: npm run test:topology'
const LONG = process.env.TOPOLOGY === 'long'
const SIZE = LONG
  ? { users: 40, targets: 16, width: 16, loadMs: 12_000 }
  : { users: 16, targets: 8, width: 8, loadMs: 5000 }
const CHANNEL = 'auth:sessions-revoked'

/** The line for the release note: `topology: <step>: <figures>`. */
function report(step: string, figures: Record<string, string | number>): void {
  const parts = Object.entries(figures).map(([k, v]) => `${k} ${v}`)
  console.log(`topology: ${step}: ${parts.join(', ')}`)
}

const world = new Topology()
let tenant: Tenant
before(async () => {
  if (SKIP) return
  await world.start()
  tenant = await createTenant(world.haproxy.base)
})
after(() => (SKIP ? undefined : world.teardown()))

const bases = () => world.instances.filter((s) => s.running).map((s) => s.base)

async function login(base: string, email: string, ip = randomIp()): Promise<Reply> {
  return call(base, 'POST', `/v1/${tenant.slug}/auth/login`, {
    ip,
    body: { email, password: PASSWORD },
  })
}

/** Logs out on `revoker`, then polls /me on every instance: ms until all refuse the token. */
async function revocationReach(revoker: string, session: Session, instances: string[]) {
  for (const base of instances) {
    expectStatus(
      await callSure(base, 'GET', `/v1/${tenant.slug}/me`, { token: session.accessToken }),
      200,
      'the session works everywhere before the logout',
    )
  }
  const res = await callSure(revoker, 'POST', `/v1/${tenant.slug}/auth/logout`, {
    body: { refreshToken: session.refreshToken },
  })
  expectStatus(res, 200, 'logout')
  const started = performance.now()
  const refused = await Promise.all(
    instances.map(async (base) => {
      const ok = await until(async () => {
        const me = await call(base, 'GET', `/v1/${tenant.slug}/me`, { token: session.accessToken })
        return me.status === 401
      }, 6000)
      return ok ? performance.now() - started : Number.POSITIVE_INFINITY
    }),
  )
  return Math.max(...refused)
}

/** Wrong passwords from one address, instance after instance: the budget counts them all. */
async function limitAcrossInstances(instances: string[]) {
  const session = await signup(instances[0], tenant.slug)
  const ip = randomIp()
  const statuses: number[] = []
  for (let i = 0; i < LOGIN_FAILURES + instances.length; i++) {
    const res = await call(
      instances[i % instances.length],
      'POST',
      `/v1/${tenant.slug}/auth/login`,
      {
        ip,
        body: { email: session.email, password: 'not-the-password-at-all' },
      },
    )
    statuses.push(res.status)
  }
  return statuses
}

function expectLimitHeld(statuses: number[], what: string) {
  const expected = statuses.map((_, i) => (i < LOGIN_FAILURES ? 401 : 429))
  assert.deepEqual(statuses, expected, `${what}: ${LOGIN_FAILURES} failures, then 429 everywhere`)
}

test('CONTRACT §4 across three instances: revocation, refresh reuse, a shared limit', {
  skip: SKIP,
}, async () => {
  const all = bases()
  assert.equal(all.length, 3)
  const session = await signup(all[0], tenant.slug)
  const revokedWithin = await revocationReach(all[1], session, all)
  assert.ok(revokedWithin <= 5000, `revoked session refused everywhere in ${ms(revokedWithin)}`)

  // Refresh on one instance, replay the spent token on another: reuse, the family ends.
  const family = await signup(all[0], tenant.slug)
  const rotated = await callSure(all[0], 'POST', `/v1/${tenant.slug}/auth/refresh`, {
    body: { refreshToken: family.refreshToken },
  })
  expectStatus(rotated, 200, 'first refresh')
  const replay = await callSure(all[1], 'POST', `/v1/${tenant.slug}/auth/refresh`, {
    body: { refreshToken: family.refreshToken },
  })
  assert.equal(replay.status, 401)
  assert.equal(replay.body.details?.reason, 'refresh_token_reused')
  const successor = await callSure(all[2], 'POST', `/v1/${tenant.slug}/auth/refresh`, {
    body: { refreshToken: rotated.body.refreshToken },
  })
  assert.equal(successor.status, 401, 'the successor dies with its family, on a third instance')
  const revokedFamily = await until(async () => {
    const me = await call(all[2], 'GET', `/v1/${tenant.slug}/me`, {
      token: rotated.body.accessToken,
    })
    return me.status === 401
  }, 5000)
  assert.ok(revokedFamily, "the family's access token is refused within 5 s")

  expectLimitHeld(await limitAcrossInstances(all), 'login failures over three instances')
  report('§4 across three', {
    'revocation reached all three in': ms(revokedWithin),
    'refresh reuse': 'caught across instances',
    'login failure budget': `${LOGIN_FAILURES} over three instances`,
  })
})

test('webhooks with a worker on each of three instances: every event delivered once', {
  skip: SKIP,
}, async () => {
  const received: string[] = []
  const receiver = createServer((req, res) => {
    received.push(String(req.headers['webhook-id']))
    req.resume()
    req.on('end', () => res.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = receiver.address() as AddressInfo
    const created = await callSure(world.haproxy.base, 'POST', `/v1/${tenant.slug}/webhooks`, {
      token: tenant.adminToken,
      body: { url: `http://127.0.0.1:${port}/hook`, events: ['*'] },
    })
    expectStatus(created, 200, 'webhook creation')
    const webhookId = created.body.webhook.id
    // Events written through HAProxy, so by all three instances.
    await inBatches(Array.from({ length: 12 }), 4, () => signup(world.haproxy.base, tenant.slug))
    const deliveries = async () =>
      query(
        world.pg.url,
        `SELECT id, status FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2`,
        [tenant.tenantId, webhookId],
      )
    const settled = await until(
      async () => {
        const rows = await deliveries()
        return rows.length >= 24 && rows.every((r) => r.status !== 'Pending')
      },
      30_000,
      250,
    )
    assert.ok(settled, 'every delivery left the outbox')
    const rows = await deliveries()
    const ids = rows.map((r) => r.id as string).sort()
    assert.deepEqual([...received].sort(), ids, 'each delivery arrived once, none twice')
    report('webhooks over three workers', { deliveries: ids.length, 'received twice': 0 })
    // The later steps' load is not for this receiver.
    const off = await callSure(
      world.haproxy.base,
      'PATCH',
      `/v1/${tenant.slug}/webhooks/${webhookId}`,
      {
        token: tenant.adminToken,
        body: { enabled: false },
      },
    )
    expectStatus(off, 200, 'webhook disabled')
  } finally {
    receiver.close()
  }
})

interface Chain {
  session: Session
  busy: boolean
  uncertain: boolean
}

test('kill -9 of one instance under load: only requests in flight fail, nothing acknowledged is lost', {
  skip: SKIP,
}, async () => {
  const lb = world.haproxy.base
  const slug = tenant.slug
  const chains: Chain[] = (
    await inBatches(Array.from({ length: SIZE.users }), 4, () => signup(lb, slug))
  ).map((session) => ({ session, busy: false, uncertain: false }))
  const targets = (
    await inBatches(Array.from({ length: SIZE.targets }), 4, () => signup(lb, slug))
  ).map((s) => ({
    userId: s.userId,
    role: 'Member',
    busy: false,
    lost: undefined as string | undefined,
  }))

  let killAt = Number.POSITIVE_INFINITY
  // When the victim's exit was seen: until then the kernel may still hand it connections
  // (its listen queue), whose requests die with it like those in flight.
  let deadAt = Number.POSITIVE_INFINITY
  const unexpected: string[] = []
  const acked = { login: 0, refresh: 0, me: 0, adminWrite: 0, adminRead: 0 }
  const failed = (r: Reply) => r.status === 0 || r.status >= 500
  const load = new Load({ width: SIZE.width, maxOps: 100_000, maxMs: SIZE.loadMs }, async () => {
    const r = Math.random()
    if (r < 0.2) return doLogin()
    if (r < 0.45) return doRefresh()
    if (r < 0.7) return doMe()
    if (r < 0.85) return doAdminWrite()
    return doAdminRead()
  })
  const answered = (kind: keyof typeof acked, reply: Reply) => {
    load.record(kind, reply)
    if (reply.status >= 200 && reply.status < 300) {
      acked[kind]++
      return true
    }
    if (!failed(reply) || reply.startedAt >= deadAt) {
      const when = Number.isFinite(killAt)
        ? ` (${Math.round(reply.startedAt - killAt)} ms after the kill)`
        : ''
      unexpected.push(
        `${kind}: ${reply.status} ${reply.error ?? JSON.stringify(reply.body)}${when}`,
      )
    }
    return false
  }

  async function doLogin() {
    const chain = pick(chains.filter((c) => !c.busy))
    if (!chain) return
    chain.busy = true
    const reply = await login(lb, chain.session.email)
    if (answered('login', reply)) {
      // A new session of the same user: the load carries on with it.
      chains.push({ session: sessionOf(reply, chain.session.email), busy: false, uncertain: false })
    }
    chain.busy = false
  }

  async function doRefresh() {
    const chain = pick(chains.filter((c) => !c.busy && !c.uncertain))
    if (!chain) return
    chain.busy = true
    const reply = await call(lb, 'POST', `/v1/${slug}/auth/refresh`, {
      ip: randomIp(),
      body: { refreshToken: chain.session.refreshToken },
    })
    if (answered('refresh', reply)) {
      chain.session.refreshToken = reply.body.refreshToken
      chain.session.accessToken = reply.body.accessToken
    } else chain.uncertain = true
    chain.busy = false
  }

  async function doMe() {
    const chain = pick(chains.filter((c) => !c.busy && !c.uncertain))
    if (!chain) return
    answered('me', await call(lb, 'GET', `/v1/${slug}/me`, { token: chain.session.accessToken }))
  }

  async function doAdminWrite() {
    const target = pick(targets.filter((t) => !t.busy && !t.lost))
    if (!target) return
    target.busy = true
    const role = target.role === 'Member' ? 'Admin' : 'Member'
    const reply = await call(lb, 'PATCH', `/v1/${slug}/users/${target.userId}`, {
      token: tenant.adminToken,
      ip: randomIp(),
      body: { role },
    })
    if (answered('adminWrite', reply)) target.role = reply.body.role
    else target.lost = role
    target.busy = false
  }

  async function doAdminRead() {
    const path = Math.random() < 0.5 ? `/v1/${slug}/users?limit=20` : `/v1/${slug}/audit?limit=20`
    answered('adminRead', await call(lb, 'GET', path, { token: tenant.adminToken, ip: randomIp() }))
  }

  await sleep(SIZE.loadMs * 0.4)
  const victim = world.instances[2]
  const inFlight = load.inFlight
  killAt = performance.now()
  victim.child.kill('SIGKILL')
  await victim.exit
  deadAt = performance.now()
  const startedMeanwhile = load.startedBetween(killAt, deadAt).length + load.inFlight
  // The load goes on, through HAProxy, while it finds the instance gone and stops using it.
  await sleep(SIZE.loadMs * 0.5)
  await load.stop()
  assert.equal((await victim.exit).signal, 'SIGKILL')
  const bound = inFlight + startedMeanwhile

  const failures = load.replies.filter(failed)
  assert.deepEqual(unexpected, [], 'every other request was answered 2xx')
  assert.ok(
    failures.length <= bound,
    `${failures.length} failed, at most the ${bound} in flight between the kill and the exit`,
  )
  const after = load.replies.filter((r) => r.startedAt >= killAt)
  assert.ok(after.length > 0, 'the load went on after the kill')

  // Nothing acknowledged is lost: the roles, every refresh token that was answered, and the
  // database's own invariants (each change with its audit row, one live token per family).
  const rows = new Map(
    (
      await query(world.pg.url, 'SELECT id, role FROM users WHERE tenant_id = $1', [
        tenant.tenantId,
      ])
    ).map((u) => [u.id as string, u.role as string]),
  )
  for (const t of targets) {
    const allowed = [t.role, ...(t.lost ? [t.lost] : [])]
    assert.ok(allowed.includes(rows.get(t.userId) ?? ''), `user ${t.userId}: ${rows.get(t.userId)}`)
  }
  const live = bases()
  let refreshed = 0
  await inBatches(
    chains.filter((c) => !c.uncertain),
    4,
    async (chain) => {
      const res = await callSure(pick(live) ?? live[0], 'POST', `/v1/${slug}/auth/refresh`, {
        ip: randomIp(),
        body: { refreshToken: chain.session.refreshToken },
      })
      expectStatus(res, 200, 'an acknowledged refresh token still works')
      chain.session.refreshToken = res.body.refreshToken
      refreshed++
    },
  )
  const invariants = await checkInvariants(world.pg.url, tenant.tenantId)
  assert.deepEqual(invariants.violations, [])

  report('kill -9 under load', {
    acknowledged: Object.entries(acked)
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
    'in flight at kill': inFlight,
    'kill to exit': ms(deadAt - killAt),
    'in flight until the exit': bound,
    failed: failures.length,
    'requests after the kill': after.length,
    'refresh tokens checked': refreshed,
    'invariants held': invariants.held,
    statuses: statusSummary(load.replies),
    'three instances ready (concurrent migration through PgBouncer)': ms(world.startMs),
  })
})

test('Redis master killed: Sentinel fails over, the instances follow within 10 s, /ready stays 200', {
  skip: SKIP,
}, async () => {
  const live = bases()
  const oldPort = await world.masterPort()
  assert.equal(oldPort, world.master.port)
  const subscribers = Number(
    ((await world.redis(oldPort, ['PUBSUB', 'NUMSUB', CHANNEL])) as [string, number])[1],
  )
  assert.ok(subscribers >= live.length, 'every live instance listens for revocations')

  // /ready on every live instance, five times a second, throughout.
  const readiness: number[] = []
  let probing = true
  const probe = (async () => {
    while (probing) {
      for (const base of live)
        readiness.push((await call(base, 'GET', '/ready', { timeoutMs: 3000 })).status)
      await sleep(200)
    }
  })()

  const killedAt = performance.now()
  await world.master.stop()
  const promoted = await until(
    async () => (await world.masterPort().catch(() => 0)) !== oldPort,
    30_000,
    100,
  )
  assert.ok(promoted, 'Sentinel promoted the replica')
  const promotedAt = performance.now()
  assert.equal(await world.masterPort(), world.replica.port)

  // Followed: each instance's revocation subscriber is on the new master, and the limits
  // count there (a failed sign-in on each instance writes its counter to the new master).
  const followed = await until(
    async () => {
      const reply = (await world
        .redis(world.replica.port, ['PUBSUB', 'NUMSUB', CHANNEL])
        .catch(() => [CHANNEL, 0])) as [string, number]
      return Number(reply[1]) >= live.length
    },
    10_000,
    100,
  )
  const followedAt = performance.now()
  assert.ok(followed, 'every instance subscribed on the new master within 10 s of the promotion')
  const before = Number(await world.redis(world.replica.port, ['DBSIZE']))
  const statuses = await limitAcrossInstances(live)
  expectLimitHeld(statuses, 'login failures over the instances after the failover')
  const afterKeys = Number(await world.redis(world.replica.port, ['DBSIZE']))
  assert.ok(afterKeys > before, 'the limits count on the new master')

  const session = await signup(live[0], tenant.slug)
  const revokedWithin = await revocationReach(live[1], session, live)
  assert.ok(revokedWithin <= 5000, `revoked session refused everywhere in ${ms(revokedWithin)}`)

  probing = false
  await probe
  const notReady = readiness.filter((s) => s !== 200)
  assert.deepEqual(notReady, [], '/ready answered 200 throughout the failover')
  report('redis failover', {
    'promotion after the kill': ms(promotedAt - killedAt),
    'instances followed after the promotion': ms(followedAt - promotedAt),
    'readiness probes': `${readiness.length}, all 200`,
    'revocation after failover reached all in': ms(revokedWithin),
    'new master keys': afterKeys,
  })
})
