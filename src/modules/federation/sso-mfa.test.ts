// CONTRACT §12, "mfaPolicy applies after SSO unless mfaSatisfied" (issue 36), against a real
// OpenID provider (panva's oidc-provider on loopback): under mfaPolicy Required, a user with
// TOTP whose IdP reported no second factor is linked and sent to the hosted second-factor
// page with a pending sign-in (five minutes, single use, bound to the browser by its
// cookie); a wrong code is refused and counted, the right one (or a recovery code) starts
// the session with amr fed + otp + mfa; another browser, a second use and an expired pending
// sign-in are refused with nothing changed. A user without TOTP is refused as before.
// A remembered device (CONTRACT §21): the page's box remembers the browser, whose next SSO
// sign-in skips the page; another user's device or a forgotten one does not.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { auditRows, sessionRows, setUser, userByEmail } from '../../../test/db.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { connectOidcIdp } from '../../../test/fixtures/sso-oidc.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import {
  type IdpAccount,
  type OidcProviderFixture,
  startOidcProvider,
} from '../../../test/oidc-provider.ts'
import { PageClient } from '../../../test/web/page-client.ts'

let server: TestServer
let idp: OidcProviderFixture
let t: TenantFixture
let connectionId: string
const hex = () => randomBytes(4).toString('hex')
const domain = `mfa-${hex()}.example.com`

before(async () => {
  idp = await startOidcProvider()
  server = await startServer({ webhookAllowPrivate: true })
  t = await createTenant(server)
  connectionId = await connectOidcIdp(server, t, idp, 'IdP', [domain])
})

after(async () => {
  await server?.close()
  await idp?.close()
})

/** A user of the connection's domain with a confirmed address and TOTP (and recovery codes). */
async function enrolledUser() {
  const person = await signup(server, t.slug, `person-${hex()}@${domain}`)
  await setUser(server, t.tenantId, person.user.id, { emailVerified: true })
  const { secret, recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, person.accessToken)
  const who: IdpAccount = { sub: `sub-${hex()}`, email: person.email, email_verified: true }
  return {
    userId: person.user.id as string,
    email: person.email,
    accessToken: person.accessToken as string,
    secret,
    recoveryCodes,
    who,
  }
}

/** The browser's way from the SSO start page through the IdP to the callback's answer. */
async function ssoSignIn(browser: PageClient, who: IdpAccount) {
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const started = await browser.once('GET', `/t/${t.slug}/sso/${connectionId}`)
  assert.equal(started.status, 303, await started.text())
  const back = await idp.authorize(started.headers.get('location') ?? '', who)
  return browser.once('GET', back.pathname + back.search)
}

const PAGE = () => `/t/${t.slug}/sign-in/sso/second-factor`
const logins = async (userId: string) =>
  (await auditRows(server, t.tenantId, 'UserLogin')).filter((r) => r.userId === userId)
const failures = async (userId: string) =>
  (await auditRows(server, t.tenantId, 'UserLoginFailed')).filter((r) => r.userId === userId)

/** The amr of the browser's page session, read from its sealed cookie. */
function sessionAmr(browser: PageClient): string[] | undefined {
  const sealed = browser.cookies.get('ta_session')
  if (!sealed) return undefined
  return JSON.parse(
    server.deps.cipher.decrypt(decodeURIComponent(sealed), `page-session:${t.tenantId}`),
  ).amr
}

test('sso under mfaPolicy Required: a TOTP user is asked for the code after the IdP; wrong refused and counted, right signs in (amr fed otp mfa); another browser and a second use are refused', async () => {
  const user = await enrolledUser()
  const required = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required' },
    { token: t.admin.accessToken },
  )
  assert.equal(required.status, 200, JSON.stringify(required.body))
  const sessionsBefore = (await sessionRows(server, t.tenantId, user.userId)).length

  const browser = new PageClient(server)
  const callback = await ssoSignIn(browser, user.who)
  assert.equal(callback.status, 303, await callback.text())
  assert.equal(callback.headers.get('location'), PAGE())
  assert.ok(browser.cookies.get('ta_pending'), 'the pending sign-in is bound to this browser')
  assert.match(browser.setCookieLines.get('ta_pending') ?? '', new RegExp(`Path=/t/${t.slug}`))
  // Linked, but no session yet.
  assert.equal(browser.cookies.get('ta_session'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore)
  const linked = (await auditRows(server, t.tenantId, 'SsoIdentityLinked')).filter(
    (r) => r.userId === user.userId,
  )
  assert.equal(linked.length, 1)
  assert.equal((await logins(user.userId)).filter((r) => r.metadata?.method === 'sso').length, 0)

  const page = await browser.get(PAGE())
  assert.equal(page.status, 200)
  assert.match(page.html, /name="totpCode"/)
  assert.match(page.html, /name="recoveryCode"/)

  // A wrong code: refused, audited, counted; no session.
  const failedBefore = (await failures(user.userId)).length
  const wrong = await browser.post(PAGE(), { method: 'totp', totpCode: '000000' })
  assert.equal(wrong.status, 401)
  assert.match(wrong.html, /id="totpCode-error"/)
  const failed = await failures(user.userId)
  assert.equal(failed.length, failedBefore + 1)
  assert.equal(failed.at(-1)?.metadata?.reason, 'invalid_mfa_code')
  assert.equal(failed.at(-1)?.metadata?.connectionId, connectionId)
  assert.equal(browser.cookies.get('ta_session'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore)

  // Another browser, without this one's pending cookie: refused, nothing changed.
  const stranger = new PageClient(server)
  const strangerPage = await stranger.get(PAGE())
  assert.equal(strangerPage.status, 400)
  await stranger.get(`/t/${t.slug}/sign-in`) // its own CSRF field
  const stolen = await stranger.post(PAGE(), {
    method: 'totp',
    totpCode: totpAt(server, user.secret),
  })
  assert.equal(stolen.status, 400)
  assert.match(stolen.html, /invalid_state/)
  assert.equal(stranger.cookies.get('ta_session'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore)

  // The right code: the session, with the second factor in its amr and audit rows.
  const pendingId = browser.cookies.get('ta_pending') ?? ''
  const right = await browser.post(PAGE(), {
    method: 'totp',
    totpCode: totpAt(server, user.secret),
  })
  assert.equal(right.status, 200, right.html)
  assert.equal(new URL(right.url).pathname, `/t/${t.slug}/account`)
  assert.ok(right.html.includes(user.email.toLowerCase()), 'signed in as the IdP user')
  assert.deepEqual(sessionAmr(browser), ['fed', 'otp', 'mfa'])
  assert.equal(browser.cookies.get('ta_pending'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore + 1)
  const login = (await logins(user.userId)).at(-1)
  assert.equal(login?.metadata?.method, 'sso')
  assert.equal(login?.metadata?.connectionId, connectionId)
  const verified = (await auditRows(server, t.tenantId, 'MfaTotpVerified')).filter(
    (r) => r.userId === user.userId,
  )
  assert.equal(verified.at(-1)?.metadata?.flow, 'sso')

  // The pending sign-in again (its cookie put back, with a fresh code): used, refused.
  server.clock.advance(30)
  const replay = new PageClient(server)
  replay.cookies.set('ta_pending', pendingId)
  const replayPage = await replay.get(PAGE())
  assert.equal(replayPage.status, 400)
  await replay.get(`/t/${t.slug}/sign-in`)
  replay.cookies.set('ta_pending', pendingId) // the refusal page cleared it
  const again = await replay.post(PAGE(), { method: 'totp', totpCode: totpAt(server, user.secret) })
  assert.equal(again.status, 400)
  assert.equal(replay.cookies.get('ta_session'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore + 1)
})

test('sso under mfaPolicy Required: a recovery code signs in too (amr fed mfa); a pending sign-in expires after five minutes', async () => {
  const user = await enrolledUser()
  await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required' },
    { token: t.admin.accessToken },
  )
  const browser = new PageClient(server)
  assert.equal((await ssoSignIn(browser, user.who)).status, 303)
  await browser.get(PAGE())
  const recovered = await browser.post(PAGE(), {
    method: 'recovery',
    recoveryCode: user.recoveryCodes[0],
  })
  assert.equal(new URL(recovered.url).pathname, `/t/${t.slug}/account`, recovered.html)
  assert.deepEqual(sessionAmr(browser), ['fed', 'mfa'])
  const used = (await auditRows(server, t.tenantId, 'MfaRecoveryCodeUsed')).filter(
    (r) => r.userId === user.userId,
  )
  assert.equal(used.length, 1)

  // Five minutes later the pending sign-in is gone, even with the right code.
  const late = new PageClient(server)
  assert.equal((await ssoSignIn(late, user.who)).status, 303)
  await late.get(PAGE())
  const sessions = (await sessionRows(server, t.tenantId, user.userId)).length
  server.clock.advance(301)
  const expired = await late.post(PAGE(), { method: 'totp', totpCode: totpAt(server, user.secret) })
  assert.equal(expired.status, 400)
  assert.match(expired.html, /invalid_state/)
  assert.equal(late.cookies.get('ta_session'), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessions)
})

test('sso under mfaPolicy Required: a user without TOTP is still refused (mfa_required page), and an IdP that reported MFA signs in directly', async () => {
  const person = await signup(server, t.slug, `plain-${hex()}@${domain}`)
  await setUser(server, t.tenantId, person.user.id, { emailVerified: true })
  await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required' },
    { token: t.admin.accessToken },
  )
  const who: IdpAccount = { sub: `sub-${hex()}`, email: person.email, email_verified: true }
  const refused = await ssoSignIn(new PageClient(server), who)
  assert.equal(refused.status, 401)
  assert.match(await refused.text(), /mfa_required/)
  const withMfa = new PageClient(server)
  const direct = await ssoSignIn(withMfa, { ...who, amr: ['pwd', 'otp'] })
  assert.equal(direct.status, 303)
  assert.equal(direct.headers.get('location'), `/t/${t.slug}/account`)
  assert.deepEqual(sessionAmr(withMfa), ['fed', 'mfa'])
  assert.equal((await userByEmail(server, t.tenantId, person.email))?.status, 'Active')
})

test('sso under mfaPolicy Required with remembered devices: the page remembers this browser, its next sign-in skips the page; another user in it, and a forgotten device, are asked again', async () => {
  const user = await enrolledUser()
  const other = await enrolledUser()
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required', mfaRememberDays: 30 },
    { token: t.admin.accessToken },
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  const marked = async (userId: string) =>
    (await sessionRows(server, t.tenantId, userId)).filter((s) => s.secondFactor).length

  const browser = new PageClient(server)
  assert.equal((await ssoSignIn(browser, user.who)).headers.get('location'), PAGE())
  const page = await browser.get(PAGE())
  assert.match(page.html, /name="rememberDevice"/, 'the page offers to remember the device')
  const before = await marked(user.userId)
  const right = await browser.post(PAGE(), {
    method: 'totp',
    totpCode: totpAt(server, user.secret),
    rememberDevice: 'on',
  })
  assert.equal(new URL(right.url).pathname, `/t/${t.slug}/account`, right.html)
  assert.match(browser.cookies.get('ta_device') ?? '', /^rd_/, 'the browser keeps its device token')
  const rememberedBy = async (key: string) =>
    (await logins(user.userId)).filter((r) => r.metadata?.[key] === true)
  assert.equal((await rememberedBy('deviceRemembered')).length, 1)
  assert.equal(await marked(user.userId), before + 1, 'the session proved a second factor')

  // The next SSO sign-in in this browser: no second-factor page, the session starts.
  const again = await ssoSignIn(browser, user.who)
  assert.equal(again.status, 303, await again.text())
  assert.equal(again.headers.get('location'), `/t/${t.slug}/account`)
  const skipped = await rememberedBy('rememberedDevice')
  assert.equal(skipped.length, 1)
  assert.equal(skipped[0].metadata?.method, 'sso')
  assert.equal(await marked(user.userId), before + 2)

  // Another user signing in through the same browser: the device is not theirs.
  const sessionsOfOther = (await sessionRows(server, t.tenantId, other.userId)).length
  assert.equal((await ssoSignIn(browser, other.who)).headers.get('location'), PAGE())
  assert.equal((await sessionRows(server, t.tenantId, other.userId)).length, sessionsOfOther)

  // Forgotten (DELETE me/remembered-devices): the page is asked again.
  const forgot = await server.request('DELETE', `/v1/${t.slug}/me/remembered-devices`, undefined, {
    token: user.accessToken,
  })
  assert.equal(forgot.status, 200, JSON.stringify(forgot.body))
  const sessions = (await sessionRows(server, t.tenantId, user.userId)).length
  assert.equal((await ssoSignIn(browser, user.who)).headers.get('location'), PAGE())
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessions)
  await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaRememberDays: 0 },
    { token: t.admin.accessToken },
  )
})
