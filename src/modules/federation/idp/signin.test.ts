// Hosted sign-in, the whole round trip against a real OpenID provider (CONTRACT §7):
// start → provider login and consent → callback with a real code → token envelope.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { tenantSnapshot, userRow } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import {
  callbackPath,
  connectedTenant,
  identitiesOf,
  newAccount,
  redirectUriOf,
  roundTrip,
  signIn,
  startUrl,
  startWithProvider,
} from '../../../../test/fixtures/oauth.ts'
import {
  auditActions,
  signup,
  startSecondInstance,
  type TestServer,
} from '../../../../test/helpers.ts'
import type { OidcProviderFixture } from '../../../../test/oidc-provider.ts'
import { eq } from '../../../db/orm.ts'
import { auditEvents } from '../../../db/schema.ts'
import { updateUser } from '../../users/writes.ts'

let server: TestServer
let idp: OidcProviderFixture
before(async () => {
  ;({ server, idp } = await startWithProvider())
})
after(async () => {
  await server.close()
  await idp.close()
})

async function auditRows(tenantId: string) {
  return server.deps.db.select().from(auditEvents).where(eq(auditEvents.tenantId, tenantId))
}

describe('start', () => {
  test('the authorization URL carries code flow, client, redirect URI, scope, state, nonce and PKCE S256', async () => {
    const t = await connectedTenant(server, idp)
    const url = await startUrl(server, t.slug)
    assert.equal(url.origin + url.pathname, `${idp.issuer}/auth`)
    const p = url.searchParams
    assert.equal(p.get('response_type'), 'code')
    assert.equal(p.get('client_id'), t.client.clientId)
    assert.equal(p.get('redirect_uri'), `http://auth.test/v1/${t.slug}/oauth/idp/callback`)
    assert.deepEqual(p.get('scope')?.split(' '), ['openid', 'email', 'profile'])
    assert.equal(p.get('code_challenge_method'), 'S256')
    assert.match(p.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/)
    assert.match(p.get('state') ?? '', /^[A-Za-z0-9_-]{43,}$/)
    assert.match(p.get('nonce') ?? '', /^[A-Za-z0-9_-]{43,}$/)
  })

  test('every start mints a fresh state, nonce and verifier', async () => {
    const t = await connectedTenant(server, idp)
    const a = (await startUrl(server, t.slug)).searchParams
    const b = (await startUrl(server, t.slug)).searchParams
    for (const name of ['state', 'nonce', 'code_challenge']) {
      assert.notEqual(a.get(name), b.get(name), name)
    }
  })
})

describe('callback', () => {
  test('a new identity with a verified email becomes an Active Member, signed in', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const res = await signIn(server, idp, t.slug, account)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.email, account.email)
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.status, 'Active')
    assert.equal(res.body.user.emailVerified, true)
    assert.equal(res.body.user.tenantId, t.tenantId)
    assert.ok(res.body.user.lastLoginAt)
    assert.equal(res.body.accessTokenExpiresIn, 900)
    assert.equal(res.body.refreshTokenExpiresIn, 2592000)
    assert.equal(res.body.tenantSlug, undefined)

    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: res.body.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.id, res.body.user.id)
    const refreshed = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: res.body.refreshToken,
    })
    assert.equal(refreshed.status, 200)

    const row = await userRow(server, t.tenantId, res.body.user.id)
    assert.equal(row.passwordHash, null)
    const links = await identitiesOf(server, t.tenantId)
    assert.equal(links.length, 1)
    assert.equal(links[0].issuer, idp.issuer)
    assert.equal(links[0].subject, account.sub)
    assert.equal(links[0].userId, res.body.user.id)

    const events = (await auditRows(t.tenantId)).filter((e) => e.userId === res.body.user.id)
    assert.deepEqual(events.map((e) => e.action).sort(), [
      'SessionCreated',
      'UserLogin',
      'UserSignup',
    ])
    for (const e of events.filter((e) => e.action !== 'SessionCreated')) {
      assert.equal(e.metadata.via, 'idp')
      assert.equal(e.metadata.issuer, idp.issuer)
      assert.equal(e.actorType, 'user')
      assert.equal(e.actorId, res.body.user.id)
    }
  })

  test('the same identity signs in again as the same user, with UserLogin and no new signup', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    const second = await signIn(server, idp, t.slug, account)
    assert.equal(second.status, 200)
    assert.equal(second.body.user.id, first.body.user.id)
    const actions = await auditActions(server, t.tenantId)
    assert.equal(actions.filter((a) => a === 'UserSignup').length, 2) // the admin and this user
    assert.equal(actions.filter((a) => a === 'UserLogin').length, 2)
    assert.equal((await identitiesOf(server, t.tenantId)).length, 1)
  })

  test('identities are keyed by (issuer, subject): a changed email at the provider keeps the account', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    const moved = { ...account, email: `moved-${account.email}` }
    const second = await signIn(server, idp, t.slug, moved)
    assert.equal(second.status, 200)
    assert.equal(second.body.user.id, first.body.user.id)
    const links = await identitiesOf(server, t.tenantId)
    assert.equal(links.length, 1)
    assert.equal(links[0].email, moved.email)
  })

  test('a verified email links the identity to the existing account of that address, verified here too', async () => {
    const t = await connectedTenant(server, idp)
    const existing = await signup(server, t.slug)
    // The owner proved the address here (a login code, an email OTP or an invitation).
    await updateUser(server.deps.db, t.tenantId, existing.user.id, { emailVerified: true })
    const res = await signIn(
      server,
      idp,
      t.slug,
      newAccount({ email: existing.email.toUpperCase() }),
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, existing.user.id)
    assert.equal(res.body.user.emailVerified, true)
    const links = await identitiesOf(server, t.tenantId)
    assert.equal(links[0].userId, existing.user.id)
    const actions = await auditActions(server, t.tenantId)
    assert.equal(actions.filter((a) => a === 'UserSignup').length, 2) // admin + password signup
    const login = (await auditRows(t.tenantId)).find((e) => e.action === 'UserLogin')
    assert.equal(login?.metadata.linked, true)
  })

  test('pre-registration takeover: a verified provider email never links to an account whose address was not verified here', async () => {
    const t = await connectedTenant(server, idp)
    // The attacker signs the victim's address up with a password; signup verifies nothing.
    const squatted = await signup(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const rowBefore = await userRow(server, t.tenantId, squatted.user.id)
    const res = await signIn(server, idp, t.slug, newAccount({ email: squatted.email }))
    expectError(res, 400, 'email_taken')
    assert.equal(res.body.accessToken, undefined)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    assert.deepEqual(await identitiesOf(server, t.tenantId), [])
    const row = await userRow(server, t.tenantId, squatted.user.id)
    assert.deepEqual(row, rowBefore)
    assert.equal(row.emailVerified, false)
    const events = await auditRows(t.tenantId)
    assert.ok(!events.some((e) => e.action === 'UserEmailVerified'))
    const failed = events.filter((e) => e.action === 'UserLoginFailed')
    assert.equal(failed.length, 1)
    assert.equal(failed[0].userId, squatted.user.id)
    assert.equal(failed[0].metadata.via, 'idp')
    assert.equal(failed[0].metadata.reason, 'email_taken')
  })

  test('a Pending user (an address that only asked for a login code) is not linked by email', async () => {
    const t = await connectedTenant(server, idp)
    const existing = await signup(server, t.slug)
    await updateUser(server.deps.db, t.tenantId, existing.user.id, { status: 'Pending' })
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const res = await signIn(server, idp, t.slug, newAccount({ email: existing.email }))
    expectError(res, 400, 'email_taken')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    assert.equal((await userRow(server, t.tenantId, existing.user.id)).status, 'Pending')
  })

  test('an existing link signs in whatever the address state, and a verified email then verifies it', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount({ email_verified: false })
    const first = await signIn(server, idp, t.slug, account)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.user.emailVerified, false)
    const second = await signIn(server, idp, t.slug, { ...account, email_verified: true })
    assert.equal(second.status, 200, JSON.stringify(second.body))
    assert.equal(second.body.user.id, first.body.user.id)
    assert.equal(second.body.user.emailVerified, true)
    assert.ok((await auditActions(server, t.tenantId)).includes('UserEmailVerified'))
  })

  test('an unverified email never links to an existing account', async () => {
    const t = await connectedTenant(server, idp)
    const existing = await signup(server, t.slug)
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const res = await signIn(
      server,
      idp,
      t.slug,
      newAccount({ email: existing.email, email_verified: false }),
    )
    expectError(res, 400, 'email_taken')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    assert.equal((await userRow(server, t.tenantId, existing.user.id)).emailVerified, false)
    const failed = (await auditRows(t.tenantId)).filter((e) => e.action === 'UserLoginFailed')
    assert.equal(failed.length, 1)
    assert.equal(failed[0].userId, existing.user.id)
    assert.equal(failed[0].metadata.via, 'idp')
  })

  test('an unverified email of an unknown address becomes a new, unverified account', async () => {
    const t = await connectedTenant(server, idp)
    const res = await signIn(server, idp, t.slug, newAccount({ email_verified: false }))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.emailVerified, false)
  })

  test('an identity without an email cannot create an account', async () => {
    const t = await connectedTenant(server, idp)
    const before = await tenantSnapshot(server, t.tenantId)
    const res = await signIn(server, idp, t.slug, { sub: `no-mail-${Date.now()}` })
    expectError(res, 401, 'idp_exchange_failed')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a suspended user cannot come back through the provider', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    await updateUser(server.deps.db, t.tenantId, first.body.user.id, { status: 'Suspended' })
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const res = await signIn(server, idp, t.slug, account)
    expectError(res, 401, 'account_suspended')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
  })

  test('a suspended password user is not reached through a verified email either', async () => {
    const t = await connectedTenant(server, idp)
    const existing = await signup(server, t.slug)
    await updateUser(server.deps.db, t.tenantId, existing.user.id, {
      status: 'Suspended',
      emailVerified: true,
    })
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const res = await signIn(server, idp, t.slug, newAccount({ email: existing.email }))
    expectError(res, 401, 'account_suspended')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
  })

  test('a deleted user cannot come back through the provider', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    const del = await server.request('DELETE', `/v1/${t.slug}/me`, undefined, {
      token: first.body.accessToken,
    })
    assert.equal(del.status, 200)
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const res = await signIn(server, idp, t.slug, account)
    expectError(res, 401, 'invalid_credentials')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
  })

  test('a state minted on one instance is finished on another (kept server-side)', async () => {
    const t = await connectedTenant(server, idp)
    const other = await startSecondInstance(server)
    try {
      const back = await roundTrip(server, idp, t.slug, newAccount())
      const res = await other.request('GET', callbackPath(back))
      assert.equal(res.status, 200, JSON.stringify(res.body))
    } finally {
      await other.close()
    }
  })

  test('the code is exchanged with the redirect URI of the tenant', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    assert.equal(back.origin + back.pathname, redirectUriOf(server, t.slug))
  })
})
