// The tenant's mfaPolicy holds for provider sign-in too (CONTRACT §5): when a second factor
// is due, the provider must report one in the ID token's `amr` (RFC 8176: `mfa`, or two
// distinct methods); otherwise 401 mfa_required with no methods of ours to offer, and
// nothing is created, linked or signed in. A plain OAuth 2.0 provider reports nothing.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { tenantSnapshot, userRow } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../../test/fixtures/mfa.ts'
import {
  type ConnectedTenant,
  callbackPath,
  connectedTenant,
  identitiesOf,
  newAccount,
  signIn,
  startUrl,
  startWithProvider,
} from '../../../../test/fixtures/oauth.ts'
import { randomIp, signup, startServer, type TestServer } from '../../../../test/helpers.ts'
import type { IdpAccount, OidcProviderFixture } from '../../../../test/oidc-provider.ts'
import { PageClient } from '../../../../test/web/page-client.ts'
import { and, eq } from '../../../db/orm.ts'
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

async function setPolicy(s: TestServer, t: ConnectedTenant, mfaPolicy: string) {
  const res = await s.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

async function failedLogins(s: TestServer, tenantId: string) {
  return s.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, tenantId), eq(auditEvents.action, 'UserLoginFailed')))
}

function assertMfaRefusal(res: Awaited<ReturnType<typeof signIn>>) {
  expectError(res, 401, 'mfa_required')
  assert.equal(res.body.code, 'UNAUTHORIZED')
  assert.deepEqual(res.body.details.methods, [])
  assert.match(res.body.message, /identity provider did not report multi-factor/)
  assert.equal(res.body.accessToken, undefined)
}

/** A tenant on `policy` with a user who already signed in once through `account`. */
async function linkedUser(policy: string, account: IdpAccount = newAccount()) {
  const t = await connectedTenant(server, idp)
  const first = await signIn(server, idp, t.slug, account)
  assert.equal(first.status, 200, JSON.stringify(first.body))
  await setPolicy(server, t, policy)
  return { t, account, userId: first.body.user.id as string }
}

describe('mfaPolicy Required', () => {
  test('a new identity without amr is 401 mfa_required, and no account is created', async () => {
    const t = await connectedTenant(server, idp)
    await setPolicy(server, t, 'Required')
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const account = newAccount()
    assertMfaRefusal(await signIn(server, idp, t.slug, account))
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    const failed = await failedLogins(server, t.tenantId)
    assert.equal(failed.length, 1)
    assert.equal(failed[0].userId, null)
    assert.equal(failed[0].metadata.reason, 'mfa_required')
    assert.equal(failed[0].metadata.via, 'idp')
    assert.equal(failed[0].metadata.email, account.email)
  })

  test('a linked user without amr is refused, and its account is left as it was', async () => {
    const { t, account, userId } = await linkedUser('Required')
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const row = await userRow(server, t.tenantId, userId)
    assertMfaRefusal(await signIn(server, idp, t.slug, account))
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    assert.deepEqual(await userRow(server, t.tenantId, userId), row)
    const failed = await failedLogins(server, t.tenantId)
    assert.equal(failed.length, 1)
    assert.equal(failed[0].userId, userId)
    assert.equal(failed[0].metadata.reason, 'mfa_required')
  })

  test('a verified account found by email is not linked without amr', async () => {
    const t = await connectedTenant(server, idp)
    const existing = await signup(server, t.slug)
    await updateUser(server.deps.db, t.tenantId, existing.user.id, { emailVerified: true })
    await setPolicy(server, t, 'Required')
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    assertMfaRefusal(await signIn(server, idp, t.slug, newAccount({ email: existing.email })))
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    assert.deepEqual(await identitiesOf(server, t.tenantId), [])
  })

  test("amr ['pwd', 'otp'] (a possession factor with another) signs a new user in", async () => {
    const t = await connectedTenant(server, idp)
    await setPolicy(server, t, 'Required')
    const res = await signIn(server, idp, t.slug, newAccount({ amr: ['pwd', 'otp'] }))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal((await identitiesOf(server, t.tenantId)).length, 1)
  })

  test("amr ['pwd', 'otp'] signs a linked user in", async () => {
    const { t, account, userId } = await linkedUser('Required')
    const res = await signIn(server, idp, t.slug, { ...account, amr: ['pwd', 'otp'] })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, userId)
  })

  const accepted = [['mfa'], ['pwd', 'hwk'], ['swk', 'pin'], ['pwd', 'sms'], ['face', 'pwd']]
  for (const amr of accepted) {
    test(`amr ${JSON.stringify(amr)} reports multi-factor authentication`, async () => {
      const { t, account, userId } = await linkedUser('Required')
      const res = await signIn(server, idp, t.slug, { ...account, amr })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.body.user.id, userId)
    })
  }

  const refused = [[], ['pwd'], ['otp'], ['hwk'], ['pwd', 'pwd']]
  for (const amr of refused) {
    test(`amr ${JSON.stringify(amr)} is one factor at most: 401 mfa_required`, async () => {
      const { t, account } = await linkedUser('Required')
      const before = await tenantSnapshot(server, t.tenantId, { audit: false })
      assertMfaRefusal(await signIn(server, idp, t.slug, { ...account, amr }))
      assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    })
  }

  // Claims the provider itself would not send, signed with its key: not an array of methods.
  const malformed: [string, unknown][] = [
    ['a string', 'mfa'],
    ['an object', { mfa: true }],
    ['an array of non-strings', [1, true, null]],
  ]
  for (const [name, amr] of malformed) {
    test(`an amr claim that is ${name} reports nothing: 401 mfa_required`, async () => {
      const { t, account } = await linkedUser('Required')
      const before = await tenantSnapshot(server, t.tenantId, { audit: false })
      idp.rewriteIdToken((claims) => ({ ...claims, amr }))
      try {
        assertMfaRefusal(await signIn(server, idp, t.slug, account))
      } finally {
        idp.tamperIdToken = undefined
      }
      assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    })
  }

  test('a suspended user is told so before any second factor is considered', async () => {
    const { t, account, userId } = await linkedUser('Required')
    await updateUser(server.deps.db, t.tenantId, userId, { status: 'Suspended' })
    expectError(await signIn(server, idp, t.slug, account), 401, 'account_suspended')
  })
})

describe('mfaPolicy Optional', () => {
  test('a TOTP-enrolled user without amr is 401 mfa_required', async () => {
    const { t, account, userId } = await linkedUser('Optional')
    await updateUser(server.deps.db, t.tenantId, userId, { totpEnabled: true })
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    assertMfaRefusal(await signIn(server, idp, t.slug, account))
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    const failed = await failedLogins(server, t.tenantId)
    assert.equal(failed[0].metadata.reason, 'mfa_required')
  })

  test("a TOTP-enrolled user with amr ['pwd', 'otp'] signs in", async () => {
    const { t, account, userId } = await linkedUser('Optional')
    await updateUser(server.deps.db, t.tenantId, userId, { totpEnabled: true })
    const res = await signIn(server, idp, t.slug, { ...account, amr: ['pwd', 'otp'] })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  test('a user without TOTP, and a new identity, sign in without amr', async () => {
    const { t, account } = await linkedUser('Optional')
    assert.equal((await signIn(server, idp, t.slug, account)).status, 200)
    assert.equal((await signIn(server, idp, t.slug, newAccount())).status, 200)
  })
})

describe('mfaPolicy Disabled', () => {
  test('no amr is needed, even by a user who enrolled TOTP', async () => {
    const { t, account, userId } = await linkedUser('Disabled')
    await updateUser(server.deps.db, t.tenantId, userId, { totpEnabled: true })
    const res = await signIn(server, idp, t.slug, account)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, userId)
  })
})

describe('plain OAuth 2.0 mode (no ID token, so no amr)', () => {
  let plain: TestServer
  before(async () => {
    plain = await startServer({
      idp: {
        issuer: undefined,
        authorizationUrl: `${idp.issuer}/auth`,
        tokenUrl: `${idp.issuer}/token`,
        userinfoUrl: `${idp.issuer}/me`,
        scopes: 'openid email',
      },
    })
  })
  after(async () => {
    await plain.close()
  })

  async function plainSignIn(t: ConnectedTenant, account: IdpAccount) {
    const back = await idp.authorize((await startUrl(plain, t.slug)).href, account)
    return plain.request('GET', callbackPath(back))
  }

  test('Required refuses every sign-in, whatever the provider did: 401 mfa_required', async () => {
    const t = await connectedTenant(plain, idp)
    await setPolicy(plain, t, 'Required')
    const before = await tenantSnapshot(plain, t.tenantId, { audit: false })
    assertMfaRefusal(await plainSignIn(t, newAccount({ amr: ['pwd', 'otp'] })))
    assert.deepEqual(await tenantSnapshot(plain, t.tenantId, { audit: false }), before)
    assert.equal((await failedLogins(plain, t.tenantId))[0].metadata.reason, 'mfa_required')
  })

  test('Disabled signs in as before', async () => {
    const t = await connectedTenant(plain, idp)
    const res = await plainSignIn(t, newAccount())
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })
})

describe('mfaPolicy Required, the sign-in driven by the hosted pages', () => {
  test('a TOTP user is asked for the code on the pages (wrong refused and counted, right signs in with amr fed otp mfa); the API caller still gets 401 mfa_required', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const userId = first.body.user.id as string
    const { secret } = await enrolWithRecoveryCodes(server, t.slug, first.body.accessToken)
    await setPolicy(server, t, 'Required')

    // The API's own callback (no pages' cookie): the SPEC's answer, unchanged.
    assertMfaRefusal(await signIn(server, idp, t.slug, account))

    const browser = new PageClient(server, randomIp())
    await browser.get(`/t/${t.slug}/sign-in`)
    const started = await browser.once('GET', `/t/${t.slug}/sign-in/idp`)
    assert.equal(started.status, 303, await started.text())
    const back = await idp.authorize(started.headers.get('location') ?? '', account)
    const callback = await browser.once('GET', back.pathname + back.search)
    assert.equal(callback.status, 303, await callback.text())
    const page = `/t/${t.slug}/sign-in/sso/second-factor`
    assert.equal(callback.headers.get('location'), page)
    assert.ok(browser.cookies.get('ta_pending'))
    assert.equal(browser.cookies.get('ta_session'), undefined)

    await browser.get(page)
    const failedBefore = (await failedLogins(server, t.tenantId)).length
    const wrong = await browser.post(page, { method: 'totp', totpCode: '000000' })
    assert.equal(wrong.status, 401)
    const failed = await failedLogins(server, t.tenantId)
    assert.equal(failed.length, failedBefore + 1)
    const wrongCode = failed.filter((r) => r.metadata.reason === 'invalid_mfa_code')
    assert.equal(wrongCode.length, 1)
    assert.equal(wrongCode[0].metadata.via, 'idp')
    assert.equal(browser.cookies.get('ta_session'), undefined)

    const right = await browser.post(page, { method: 'totp', totpCode: totpAt(server, secret) })
    assert.equal(new URL(right.url).pathname, `/t/${t.slug}/account`, right.html)
    const sealed = decodeURIComponent(browser.cookies.get('ta_session') ?? '')
    const session = JSON.parse(server.deps.cipher.decrypt(sealed, `page-session:${t.tenantId}`))
    assert.deepEqual(session.amr, ['fed', 'otp', 'mfa'])
    const logins = await server.deps.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'UserLogin')))
    const own = logins.filter((r) => r.userId === userId)
    assert.equal(own.length, 2, 'the first sign-in and this one')
    assert.ok(own.every((r) => (r.metadata as Record<string, unknown>)?.via === 'idp'))
  })
  test('a remembered device (CONTRACT §21): the page remembers the browser, whose next idp sign-in skips it; the API caller with no cookie is still refused', async () => {
    const t = await connectedTenant(server, idp)
    const account = newAccount()
    const first = await signIn(server, idp, t.slug, account)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const userId = first.body.user.id as string
    const { secret } = await enrolWithRecoveryCodes(server, t.slug, first.body.accessToken)
    await setPolicy(server, t, 'Required')
    const days = await server.request(
      'PATCH',
      `/v1/${t.slug}/tenant`,
      { mfaRememberDays: 7 },
      { token: t.admin.accessToken },
    )
    assert.equal(days.status, 200, JSON.stringify(days.body))
    const browser = new PageClient(server, randomIp())
    const viaPages = async () => {
      await browser.get(`/t/${t.slug}/sign-in`)
      const started = await browser.once('GET', `/t/${t.slug}/sign-in/idp`)
      const back = await idp.authorize(started.headers.get('location') ?? '', account)
      return browser.once('GET', back.pathname + back.search)
    }
    const page = `/t/${t.slug}/sign-in/sso/second-factor`
    assert.equal((await viaPages()).headers.get('location'), page)
    await browser.get(page)
    const right = await browser.post(page, {
      method: 'totp',
      totpCode: totpAt(server, secret),
      rememberDevice: 'on',
    })
    assert.equal(new URL(right.url).pathname, `/t/${t.slug}/account`, right.html)
    assert.match(browser.cookies.get('ta_device') ?? '', /^rd_/)

    const again = await viaPages()
    assert.equal(again.status, 303, await again.text())
    assert.equal(again.headers.get('location'), `/t/${t.slug}/account`)
    const logins = await server.deps.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'UserLogin')))
    const meta = logins.filter((r) => r.userId === userId).map((r) => r.metadata)
    const remembered = meta.filter((m) => (m as Record<string, unknown>)?.rememberedDevice)
    assert.equal(remembered.length, 1, JSON.stringify(meta))
    // The API's own callback carries no cookie of the pages: the SPEC's answer.
    assertMfaRefusal(await signIn(server, idp, t.slug, account))
  })
})
