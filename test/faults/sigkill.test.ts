// Faults, scenario 1 (CONTRACT §4 and §2): the service is SIGKILLed in the middle of a load
// of signups, refreshes, invite accepts and admin changes (role, suspension), then started
// again. Every request that got a 2xx is durable: the user exists, the rotated refresh
// token works, the invite is accepted with its user, the role or status change is what
// the API and the database show. A request whose answer was lost may have happened or
// not, but never half: the SQL invariants of invariants.ts hold on the database itself.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  call,
  callSure,
  createTenant,
  expectStatus,
  inBatches,
  LONG,
  ms,
  PASSWORD,
  type Reply,
  randomIp,
  report,
  type Session,
  SKIP,
  sessionOf,
  signup,
  type Tenant,
  uniqueEmail,
} from './client.ts'
import { checkInvariants, query } from './invariants.ts'
import { Load, pick, sleep, statusSummary } from './load.ts'
import { FaultWorld } from './procs.ts'

const SIZE = LONG
  ? { chains: 32, targets: 24, invites: 240, width: 16, loadMs: 8000, maxOps: 6000 }
  : { chains: 12, targets: 8, invites: 60, width: 12, loadMs: 2500, maxOps: 1500 }

let world: FaultWorld
before(async () => {
  if (SKIP) return
  world = await FaultWorld.create()
})
after(() => world?.teardown())

/** A refresh-token family the load rotates; `uncertain` once a rotation's answer was lost. */
interface Chain {
  userId: string
  token: string
  uncertain: boolean
  busy: boolean
}

/** A user the admin changes; `lost` is a change whose answer never came. */
interface Target {
  userId: string
  role: string
  status: string
  lost?: { role: string; status: string }
  busy: boolean
}

interface Invite {
  id: string
  token: string
  email: string
  state: 'open' | 'sent' | 'accepted' | 'lost'
  userId?: string
}

test('SIGKILL under load: every acknowledged change is durable, nothing is left half-done', {
  skip: SKIP,
}, async () => {
  const { service, port } = await world.startService()
  const base = service.base
  const tenant = await createTenant(base)
  const { slug } = tenant
  const width = 8
  const range = (n: number) => Array.from({ length: n }, (_, i) => i)

  const chains: Chain[] = (
    await inBatches(range(SIZE.chains), width, () => signup(base, slug))
  ).map((s) => ({ userId: s.userId, token: s.refreshToken, uncertain: false, busy: false }))
  const targets: Target[] = (
    await inBatches(range(SIZE.targets), width, () => signup(base, slug))
  ).map((s) => ({ userId: s.userId, role: 'Member', status: 'Active', busy: false }))
  const invites = await inBatches(range(SIZE.invites), width, () => invite(base, tenant))

  const acked = { signup: [] as Session[], refresh: 0, accept: 0, admin: 0 }
  const unexpected: Reply[] = []
  let killed = false
  const load = new Load({ width: SIZE.width, maxOps: SIZE.maxOps, maxMs: SIZE.loadMs * 2 }, () => {
    const r = Math.random()
    if (r < 0.3) return doSignup()
    if (r < 0.6) return doRefresh()
    if (r < 0.8) return doAdmin()
    return doAccept()
  })
  // An HTTP answer other than 2xx is a failure of its own while the service is up.
  const answered = (kind: string, reply: Reply) => {
    load.record(kind, reply)
    if (reply.status !== 0 && (reply.status < 200 || reply.status >= 300)) unexpected.push(reply)
    if (reply.status === 0 && !killed) unexpected.push(reply)
    return reply.status >= 200 && reply.status < 300
  }

  async function doSignup() {
    const email = uniqueEmail()
    const reply = await call(base, 'POST', `/v1/${slug}/auth/signup`, {
      ip: randomIp(),
      body: { email, password: PASSWORD },
    })
    if (!answered('signup', reply)) return
    const session = sessionOf(reply, email)
    acked.signup.push(session)
    chains.push({
      userId: session.userId,
      token: session.refreshToken,
      uncertain: false,
      busy: false,
    })
  }

  async function doRefresh() {
    const chain = pick(chains.filter((c) => !c.busy && !c.uncertain))
    if (!chain) return doSignup()
    chain.busy = true
    const reply = await call(base, 'POST', `/v1/${slug}/auth/refresh`, {
      ip: randomIp(),
      body: { refreshToken: chain.token },
    })
    if (answered('refresh', reply)) {
      chain.token = reply.body.refreshToken
      acked.refresh++
    } else if (reply.status === 0) {
      chain.uncertain = true
    }
    chain.busy = false
  }

  async function doAdmin() {
    const target = pick(targets.filter((t) => !t.busy && !t.lost))
    if (!target) return doSignup()
    target.busy = true
    const change =
      Math.random() < 0.5
        ? { role: target.role === 'Member' ? 'Admin' : 'Member' }
        : { status: target.status === 'Active' ? 'Suspended' : 'Active' }
    const reply = await call(base, 'PATCH', `/v1/${slug}/users/${target.userId}`, {
      token: tenant.adminToken,
      ip: randomIp(),
      body: change,
    })
    if (answered('admin', reply)) {
      const expected = { role: target.role, status: target.status, ...change }
      if (reply.body.role !== expected.role || reply.body.status !== expected.status) {
        unexpected.push(reply)
      }
      target.role = reply.body.role
      target.status = reply.body.status
      acked.admin++
    } else if (reply.status === 0) {
      target.lost = { role: target.role, status: target.status, ...change }
    }
    target.busy = false
  }

  async function doAccept() {
    const slot = invites.find((i) => i.state === 'open')
    if (!slot) return doSignup()
    slot.state = 'sent'
    const reply = await call(base, 'POST', '/v1/invites/accept', {
      ip: randomIp(),
      body: { token: slot.token, password: PASSWORD },
    })
    if (answered('accept', reply)) {
      slot.state = 'accepted'
      slot.userId = reply.body.user.id
      chains.push({
        userId: reply.body.user.id,
        token: reply.body.refreshToken,
        uncertain: false,
        busy: false,
      })
      acked.accept++
    } else if (reply.status === 0) {
      slot.state = 'lost'
    }
  }

  // The kill lands at a random moment of the second half of the load, with requests in flight.
  await sleep(SIZE.loadMs * (0.5 + Math.random() / 2))
  const inFlight = load.inFlight
  killed = true
  service.child.kill('SIGKILL')
  await load.stop()
  assert.equal((await service.exit).signal, 'SIGKILL')
  assert.deepEqual(
    unexpected.map((r) => `${r.status} ${r.error ?? JSON.stringify(r.body)}`),
    [],
    'while the service ran, every request was answered 2xx',
  )
  assert.ok(inFlight > 0, 'the kill landed with requests in flight')

  const restarted = await world.startService({ port })
  const invariantsAfterCrash = await checkInvariants(world.pg.url, tenant.tenantId)
  assert.deepEqual(invariantsAfterCrash.violations, [], 'no half-done state after the crash')

  // Durability, read on the database: acknowledged signups, accepts and admin changes.
  const users = new Map(
    (
      await query(world.pg.url, 'SELECT id, email, role, status FROM users WHERE tenant_id = $1', [
        tenant.tenantId,
      ])
    ).map((u) => [u.id as string, u]),
  )
  for (const s of acked.signup) {
    assert.equal(users.get(s.userId)?.email, s.email, `acknowledged signup ${s.email} is kept`)
  }
  const inviteRows = new Map(
    (
      await query(
        world.pg.url,
        'SELECT id, accepted_at, accepted_user_id FROM invites WHERE tenant_id = $1',
        [tenant.tenantId],
      )
    ).map((i) => [i.id as string, i]),
  )
  for (const slot of invites.filter((i) => i.state === 'accepted')) {
    const row = inviteRows.get(slot.id)
    assert.ok(row?.accepted_at, `acknowledged accept of invite ${slot.id} is kept`)
    assert.equal(row.accepted_user_id, slot.userId)
    assert.equal(users.get(slot.userId!)?.email, slot.email)
  }
  for (const slot of invites.filter((i) => i.state === 'open')) {
    assert.equal(
      inviteRows.get(slot.id)?.accepted_at,
      null,
      `invite ${slot.id} never sent stays open`,
    )
  }

  // The admin changes, as the API shows them (acknowledged, or the lost one, or the one before).
  const listed = await listUsers(restarted.service.base, tenant)
  for (const t of targets) {
    const shown = pickState(listed.get(t.userId))
    const allowed = [{ role: t.role, status: t.status }, ...(t.lost ? [t.lost] : [])]
    assert.ok(
      allowed.some((a) => a.role === shown.role && a.status === shown.status),
      `user ${t.userId} shows ${JSON.stringify(shown)}, expected one of ${JSON.stringify(allowed)}`,
    )
    assert.deepEqual(pickState(users.get(t.userId)), shown, 'the API shows the database row')
  }

  // Every refresh token: the acknowledged one works; one whose rotation answer was lost
  // either still works (not rotated) or was rotated (reuse: the family ends, as the spec says).
  let rotatedLost = 0
  await inBatches(chains, 8, async (chain) => {
    const reply = await callSure(restarted.service.base, 'POST', `/v1/${slug}/auth/refresh`, {
      ip: randomIp(),
      body: { refreshToken: chain.token },
    })
    if (!chain.uncertain)
      return expectStatus(reply, 200, `acknowledged refresh token of ${chain.userId}`)
    if (reply.status === 401 && reply.body?.details?.reason === 'refresh_token_reused')
      rotatedLost++
    else expectStatus(reply, 200, `refresh token of ${chain.userId} whose rotation was lost`)
  })

  const invariantsAfterChecks = await checkInvariants(world.pg.url, tenant.tenantId)
  assert.deepEqual(invariantsAfterChecks.violations, [], 'the invariants hold after the checks too')

  const acknowledged = acked.signup.length + acked.refresh + acked.accept + acked.admin
  report('sigkill', {
    acknowledged: `${acknowledged} (signup ${acked.signup.length}, refresh ${acked.refresh}, accept ${acked.accept}, admin ${acked.admin})`,
    'in flight at kill': inFlight,
    'lost answers': load.replies.filter((r) => r.status === 0).length,
    'lost rotations that had happened': rotatedLost,
    'refresh tokens checked': chains.length,
    'invariants held': `${invariantsAfterCrash.held} (twice)`,
    restart: ms(restarted.readyMs),
    statuses: statusSummary(load.replies),
  })
})

function pickState(user: { role?: string; status?: string } | undefined) {
  return { role: user?.role, status: user?.status }
}

async function invite(base: string, tenant: Tenant): Promise<Invite> {
  const email = uniqueEmail('invitee')
  const res = await callSure(base, 'POST', `/v1/${tenant.slug}/invites`, {
    token: tenant.adminToken,
    ip: randomIp(),
    body: { email, sendEmail: false },
  })
  expectStatus(res, 200, 'invite creation')
  return { id: res.body.invite.id, token: res.body.token, email, state: 'open' }
}

async function listUsers(base: string, tenant: Tenant) {
  const users = new Map<string, { role: string; status: string }>()
  let cursor: string | null = null
  do {
    const path: string = `/v1/${tenant.slug}/users?limit=200${cursor ? `&cursor=${cursor}` : ''}`
    const res = await callSure(base, 'GET', path, { token: tenant.adminToken, ip: randomIp() })
    expectStatus(res, 200, 'user list')
    for (const u of res.body.items) users.set(u.id, u)
    cursor = res.body.nextCursor
  } while (cursor)
  return users
}
