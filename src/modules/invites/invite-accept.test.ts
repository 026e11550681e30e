// POST /v1/invites/accept (SPEC, Invites; CONTRACT §2): the envelope with tenantSlug, and
// expiry, reuse, revocation and already-member answered as the contract says.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  actionsSince,
  auditMark,
  auditRows,
  oneEvent,
  setUser,
  unchanged,
  userByEmail,
} from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startServer,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq } from '../../db/orm.ts'
import { invites, users } from '../../db/schema.ts'

let sink: SmtpSink
let server: TestServer
let t: TenantFixture

before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await createTenant(server, { name: 'Acme Rockets' })
})
after(async () => {
  await sink.stop()
})

const ACCEPT = '/v1/invites/accept'

async function invite(body: Record<string, unknown> = {}, fixture = t) {
  const email = (body.email as string | undefined) ?? uniqueEmail('invitee')
  const res = await server.request(
    'POST',
    `/v1/${fixture.slug}/invites`,
    { email, sendEmail: false, ...body },
    { token: fixture.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { email, token: res.body.token as string, id: res.body.invite.id as string }
}

async function inviteRow(id: string) {
  const rows = await server.deps.db
    .select()
    .from(invites)
    .where(and(eq(invites.tenantId, t.tenantId), eq(invites.id, id)))
  return rows[0]
}

async function usersWithEmail(email: string) {
  const rows = await server.deps.db
    .select()
    .from(users)
    .where(and(eq(users.tenantId, t.tenantId), eq(users.emailNormalized, email.toLowerCase())))
  return rows
}

describe('POST /v1/invites/accept', () => {
  test('the token from the mail and a password make an Active, verified, signed-in user', async () => {
    const email = uniqueEmail('mailed')
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/invites`,
      { email },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200)
    const mail = await sink.waitFor(email)
    const token = mail.text.split('\n').find((line) => line === res.body.token)
    assert.ok(token, 'the mail carries the token')

    const accepted = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
    const body = accepted.body
    assert.equal(body.tenantSlug, t.slug)
    assert.equal(body.accessTokenExpiresIn, 900)
    assert.equal(body.refreshTokenExpiresIn, 2592000)
    assert.equal(body.user.email, email)
    assert.equal(body.user.tenantId, t.tenantId)
    assert.equal(body.user.status, 'Active')
    assert.equal(body.user.role, 'Member')
    assert.equal(body.user.emailVerified, true)

    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: body.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.id, body.user.id)

    const row = await inviteRow(res.body.invite.id)
    assert.ok(row.acceptedAt)
    assert.equal(row.acceptedUserId, body.user.id)
    const mine = (e: { userId: string | null }) => e.userId === body.user.id
    const acceptedEvent = await oneEvent(server, t.tenantId, 'InviteAccepted', mine)
    assert.equal(acceptedEvent.userId, body.user.id)
    assert.equal(acceptedEvent.metadata.inviteId, row.id)
    const signupEvent = await oneEvent(server, t.tenantId, 'UserSignup', mine)
    assert.equal(signupEvent.userId, body.user.id)
    assert.equal(signupEvent.metadata.via, 'invite')
    const sessionEvent = await oneEvent(server, t.tenantId, 'SessionCreated', mine)
    assert.equal(sessionEvent.userId, body.user.id)
    const verifiedEvent = await oneEvent(server, t.tenantId, 'UserEmailVerified', mine)
    assert.equal(verifiedEvent.metadata.via, 'invite')
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200, 'the chosen password signs in')
  })

  test('an Admin invitation makes an Admin', async () => {
    const { token } = await invite({ role: 'Admin' })
    const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
    assert.equal(res.status, 200)
    assert.equal(res.body.user.role, 'Admin')
    const list = await server.request('GET', `/v1/${t.slug}/invites`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(list.status, 200, 'the new admin can administer')
  })

  test('an invitation is accepted once: then 409 invite_used, nothing changes', async () => {
    const { token } = await invite()
    assert.equal(
      (await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })).status,
      200,
    )
    await unchanged(server, t.tenantId, async () => {
      const again = await server.request('POST', ACCEPT, {
        token,
        password: 'another-long-pass-99',
      })
      expectError(again, 409, 'invite_used')
    })
  })

  test('ten parallel accepts of one invitation create exactly one user', async () => {
    const { token, email } = await invite()
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD }),
      ),
    )
    const ok = results.filter((r) => r.status === 200)
    assert.equal(ok.length, 1, JSON.stringify(results.map((r) => r.status)))
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 409, 'invite_used')
    assert.equal((await usersWithEmail(email)).length, 1)
    const accepted = (await auditRows(server, t.tenantId, 'InviteAccepted')).filter(
      (e) => e.email === email,
    )
    assert.equal(accepted.length, 1)
  })

  test('an expired invitation: 401 invite_expired, InviteExpired recorded once', async () => {
    const { token, id, email } = await invite({ ttlSeconds: 60 })
    server.clock.advance(60)
    for (let i = 0; i < 2; i++) {
      const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
      expectError(res, 401, 'invite_expired')
    }
    const expired = (await auditRows(server, t.tenantId, 'InviteExpired')).filter(
      (e) => e.metadata.inviteId === id,
    )
    assert.equal(expired.length, 1)
    assert.equal(expired[0].email, email)
    assert.equal((await usersWithEmail(email)).length, 0)
    assert.equal((await inviteRow(id)).acceptedAt, null)
    // And the third try changes nothing at all.
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD }),
        401,
        'invite_expired',
      )
    })
  })

  test('one second before expiry the invitation still works', async () => {
    const { token } = await invite({ ttlSeconds: 60 })
    server.clock.advance(59)
    assert.equal(
      (await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })).status,
      200,
    )
  })

  test('a revoked or unknown token: 401 invalid_invite, nothing changes', async () => {
    const { token, id } = await invite()
    const del = await server.request('DELETE', `/v1/${t.slug}/invites/${id}`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(del.status, 200)
    await unchanged(server, t.tenantId, async () => {
      for (const tok of [token, 'no-such-token', `${token}x`, token.toUpperCase()]) {
        const res = await server.request('POST', ACCEPT, { token: tok, password: STRONG_PASSWORD })
        expectError(res, 401, 'invalid_invite')
      }
    })
  })

  test('a weak password: 400 password_too_weak, and the invitation stays usable', async () => {
    const { token, email } = await invite()
    await unchanged(server, t.tenantId, async () => {
      for (const password of ['password1234', email, email.toUpperCase()]) {
        const res = await server.request('POST', ACCEPT, { token, password })
        expectError(res, 400, 'password_too_weak')
      }
    })
    assert.equal(
      (await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })).status,
      200,
    )
  })

  test('the tenant name as the password is too weak', async () => {
    const named = await createTenant(server, { name: 'Orbital Widgets' })
    const { token } = await invite({}, named)
    const res = await server.request('POST', ACCEPT, { token, password: 'Orbital Widgets' })
    expectError(res, 400, 'password_too_weak')
  })

  test('an address that became a user meanwhile: 409 already_member, the invitation stays pending', async () => {
    const { token, email, id } = await invite()
    await signup(server, t.slug, email)
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
      expectError(res, 409, 'already_member')
    })
    assert.equal((await inviteRow(id)).acceptedAt, null)
    assert.equal((await usersWithEmail(email)).length, 1)
  })

  test('a Suspended user of the address: 409 already_member, the invitation stays pending', async () => {
    const { token, email, id } = await invite()
    const user = await signup(server, t.slug, email)
    await setUser(server, t.tenantId, user.user.id, { status: 'Suspended' })
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
      expectError(res, 409, 'already_member')
    })
    assert.equal((await inviteRow(id)).acceptedAt, null)
  })

  test('the user is created in the invitation’s tenant only', async () => {
    const second = await createTenant(server)
    const email = uniqueEmail('scoped')
    const { token } = await invite({ email }, second)
    const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
    assert.equal(res.status, 200)
    assert.equal(res.body.tenantSlug, second.slug)
    assert.equal(res.body.user.tenantId, second.tenantId)
    assert.equal(await userByEmail(server, t.tenantId, email), undefined)
    const wrongTenant = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    expectError(wrongTenant, 401, 'token_invalid')
  })

  const badBodies: [string, unknown, string | undefined][] = [
    ['missing token', { password: STRONG_PASSWORD }, 'body.token'],
    ['missing password', { token: 'abc' }, 'body.password'],
    ['an empty token', { token: '', password: STRONG_PASSWORD }, 'body.token'],
    [
      'a 1025-character token',
      { token: 't'.repeat(1025), password: STRONG_PASSWORD },
      'body.token',
    ],
    ['a numeric token', { token: 12345, password: STRONG_PASSWORD }, 'body.token'],
    ['an 11-character password', { token: 'abc', password: 'short-pass1' }, 'body.password'],
    ['a 1025-character password', { token: 'abc', password: 'p'.repeat(1025) }, 'body.password'],
    ['an array password', { token: 'abc', password: [STRONG_PASSWORD] }, 'body.password'],
    ['an array body', [], undefined],
  ]
  for (const [what, body, issue] of badBodies) {
    test(`${what} is a 400 and spends nothing`, async () => {
      const pending = await invite()
      const sent =
        body &&
        typeof body === 'object' &&
        !Array.isArray(body) &&
        'token' in body &&
        body.token === 'abc'
          ? { ...body, token: pending.token }
          : body
      await unchanged(server, t.tenantId, async () => {
        expectValidation(await server.request('POST', ACCEPT, sent), issue)
      })
      assert.equal((await inviteRow(pending.id)).acceptedAt, null)
    })
  }

  test('malformed JSON, a wrong content type and an oversized body are 400s', async () => {
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', ACCEPT, undefined, { raw: '{"token": "x"' }),
        400,
        'malformed_json',
      )
      expectError(
        await server.request('POST', ACCEPT, undefined, {
          raw: 'token=x',
          headers: { 'content-type': 'text/plain' },
        }),
        400,
        'unsupported_media_type',
      )
      expectError(
        await server.request('POST', ACCEPT, {
          token: 't'.repeat(70_000),
          password: STRONG_PASSWORD,
        }),
        400,
        'body_too_large',
      )
    })
  })
})

describe('accepting for a Pending user (a passwordless JIT sign-up never finished)', () => {
  test('the JIT user of request-login-code is taken over: same id, Active, the invitation’s role, verified', async () => {
    const jit = await createTenant(server)
    const patched = await server.request(
      'PATCH',
      `/v1/${jit.slug}/tenant`,
      { authPolicy: 'PasswordAndPasswordless', passwordlessJitSignup: true },
      { token: jit.admin.accessToken },
    )
    assert.equal(patched.status, 200)
    const email = uniqueEmail('jit')
    const asked = await server.request('POST', `/v1/${jit.slug}/auth/request-login-code`, {
      email,
    })
    assert.equal(asked.status, 200)
    const pending = await userByEmail(server, jit.tenantId, email)
    assert.equal(pending?.status, 'Pending')
    const pendingId = pending?.id as string

    const { token, id } = await invite({ email, role: 'Admin' }, jit)
    const mark = await auditMark(server, jit.tenantId)
    const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.tenantSlug, jit.slug)
    assert.equal(res.body.user.id, pendingId, 'the same user, not a second one')
    assert.equal(res.body.user.status, 'Active')
    assert.equal(res.body.user.role, 'Admin')
    assert.equal(res.body.user.emailVerified, true)

    const rows = await server.deps.db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, jit.tenantId), eq(users.emailNormalized, email)))
    assert.equal(rows.length, 1)
    assert.equal(rows[0].id, pendingId)
    assert.equal(rows[0].status, 'Active')
    assert.equal(rows[0].role, 'Admin')
    assert.equal(rows[0].emailVerified, true)
    assert.ok(rows[0].passwordHash)
    const row = await server.deps.db
      .select()
      .from(invites)
      .where(and(eq(invites.tenantId, jit.tenantId), eq(invites.id, id)))
    assert.ok(row[0].acceptedAt)
    assert.equal(row[0].acceptedUserId, pendingId)

    // UserSignup was recorded when the address joined as Pending, and is not recorded again.
    assert.deepEqual(await actionsSince(server, jit.tenantId, mark), [
      'InviteAccepted',
      'SessionCreated',
      'UserEmailVerified',
    ])
    const accepted = await oneEvent(
      server,
      jit.tenantId,
      'InviteAccepted',
      (e) => e.userId === pendingId,
    )
    assert.equal(accepted.metadata.pendingUserActivated, true)
    assert.equal(accepted.metadata.role, 'Admin')
    const signups = (await auditRows(server, jit.tenantId, 'UserSignup')).filter(
      (e) => e.userId === pendingId,
    )
    assert.equal(signups.length, 1)
    assert.equal(signups[0].metadata.via, 'passwordless')

    const login = await server.request('POST', `/v1/${jit.slug}/auth/login`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200, 'the chosen password signs in')
    assert.equal(login.body.user.id, pendingId)
    const list = await server.request('GET', `/v1/${jit.slug}/invites`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(list.status, 200, 'the new admin can administer')
  })

  test('a Member invitation takes over a directly stored Pending user; other tenants’ users are untouched', async () => {
    const other = await createTenant(server)
    const email = uniqueEmail('pending')
    const pendingId = await insertPendingUser(server, t.tenantId, email)
    const elsewhereId = await insertPendingUser(server, other.tenantId, email)
    const { token } = await invite({ email })
    const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, pendingId)
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.status, 'Active')
    const mine = await usersWithEmail(email)
    assert.equal(mine.length, 1)
    const [elsewhere] = await server.deps.db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, other.tenantId), eq(users.id, elsewhereId)))
    assert.equal(elsewhere.status, 'Pending')
    assert.equal(elsewhere.passwordHash, null)
    assert.equal(elsewhere.emailVerified, false)
  })

  test('ten parallel accepts for a Pending user take it over exactly once', async () => {
    const email = uniqueEmail('pending-burst')
    const pendingId = await insertPendingUser(server, t.tenantId, email)
    const { token } = await invite({ email })
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD }),
      ),
    )
    const ok = results.filter((r) => r.status === 200)
    assert.equal(ok.length, 1, JSON.stringify(results.map((r) => r.status)))
    assert.equal(ok[0].body.user.id, pendingId)
    for (const r of results.filter((r) => r.status !== 200)) expectError(r, 409, 'invite_used')
    const rows = await usersWithEmail(email)
    assert.equal(rows.length, 1)
    assert.equal(rows[0].status, 'Active')
    const mine = (e: { userId: string | null }) => e.userId === pendingId
    assert.equal((await auditRows(server, t.tenantId, 'InviteAccepted')).filter(mine).length, 1)
    assert.equal((await auditRows(server, t.tenantId, 'SessionCreated')).filter(mine).length, 1)
    assert.equal((await auditRows(server, t.tenantId, 'UserSignup')).filter(mine).length, 0)
  })

  test('a Pending user who signed in meanwhile (now Active): 409 already_member, nothing changes', async () => {
    const email = uniqueEmail('raced')
    const pendingId = await insertPendingUser(server, t.tenantId, email)
    const { token, id } = await invite({ email })
    await setUser(server, t.tenantId, pendingId, { status: 'Active', emailVerified: true })
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('POST', ACCEPT, { token, password: STRONG_PASSWORD })
      expectError(res, 409, 'already_member')
    })
    assert.equal((await inviteRow(id)).acceptedAt, null)
    const [row] = await usersWithEmail(email)
    assert.equal(row.passwordHash, null, 'the password was not set')
    assert.equal(row.role, 'Member')
  })

  test('a weak password leaves the Pending user as it was', async () => {
    const email = uniqueEmail('weak')
    await insertPendingUser(server, t.tenantId, email)
    const { token } = await invite({ email, role: 'Admin' })
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', ACCEPT, { token, password: 'password1234' }),
        400,
        'password_too_weak',
      )
    })
    const [row] = await usersWithEmail(email)
    assert.equal(row.status, 'Pending')
  })
})

describe('invite acceptance rate limit', () => {
  test('accepts are limited per IP (tokenEndpoints): 429 with Retry-After', async () => {
    const limited = await startServer({
      limits: { ...GENEROUS_LIMITS, tokenEndpoints: { points: 3, seconds: 60 } },
    })
    try {
      const ip = randomIp()
      for (let i = 0; i < 3; i++) {
        const res = await limited.request(
          'POST',
          ACCEPT,
          { token: `guess-${i}`, password: STRONG_PASSWORD },
          { ip },
        )
        expectError(res, 401, 'invalid_invite')
      }
      const blocked = await limited.request(
        'POST',
        ACCEPT,
        { token: 'guess-3', password: STRONG_PASSWORD },
        { ip },
      )
      expectError(blocked, 429, 'rate_limited')
      const otherIp = await limited.request('POST', ACCEPT, {
        token: 'guess-4',
        password: STRONG_PASSWORD,
      })
      expectError(otherIp, 401, 'invalid_invite')
    } finally {
      await limited.close()
    }
  })
})
