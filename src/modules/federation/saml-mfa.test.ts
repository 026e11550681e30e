// CONTRACT §12, "mfaPolicy applies after SSO unless mfaSatisfied", through a SAML connection
// to a real IdP nobody here wrote (SimpleSAMLphp, test/fixtures/simplesamlphp.ts; its
// exampleauth:UserPass reports a password AuthnContext, no second factor). The OpenID
// connection's twin is sso-mfa.test.ts. Under mfaPolicy Required a user with TOTP is linked
// at the ACS and sent to the hosted second-factor page with a pending sign-in bound to the
// browser; a wrong code is refused and counted, the right one starts the session with amr
// fed + otp + mfa. With the connection `mfaSatisfied`, the ACS signs the same user in directly.
// A person is played by plain HTTP: the hosted pages' cookies in a PageClient, the IdP's in
// a jar of its own, the IdP's auto-posting form posted to our ACS by hand. PUBLIC_URL is
// https, as in production, so the cookies are the `__Host-` ones (§16): the pending sign-in
// is `__Host-ta_pending_{slug}` (the OpenID twin runs on http).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditRows, sessionRows, setUser } from '../../../test/db.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import {
  type SimpleSamlIdp,
  SSP_USERS,
  type SspUser,
  signInAtSimpleSaml,
  startSimpleSamlPhp,
} from '../../../test/fixtures/simplesamlphp.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

let server: TestServer
let ssp: SimpleSamlIdp
let t: TenantFixture
let connectionId: string

before(async () => {
  ssp = await startSimpleSamlPhp()
  // The IdP is plain http on a loopback address, which only WEBHOOK_ALLOW_PRIVATE admits.
  server = await startServer({ webhookAllowPrivate: true, publicUrl: 'https://auth.example.com' })
  t = await createTenant(server, { name: 'Corp' })
  const created = await server.request(
    'POST',
    `/v1/${t.slug}/sso-connections`,
    {
      name: 'Corp IdP',
      type: 'saml',
      domains: ['corp.example'],
      saml: { idpMetadataXml: await ssp.metadataXml() },
    },
    { token: t.admin.accessToken },
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const { connection } = created.body
  assert.equal(connection.mfaSatisfied, false)
  connectionId = connection.id
  ssp.registerSp({ entityId: connection.saml.spEntityId, acsUrl: connection.saml.acsUrl })
  const required = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required' },
    { token: t.admin.accessToken },
  )
  assert.equal(required.status, 200, JSON.stringify(required.body))
})

after(async () => {
  await server?.close()
  await ssp?.stop()
})

/** The tenant's user of the IdP's `who`: a confirmed address and TOTP (and recovery codes). */
async function enrolledUser(who: SspUser) {
  const person = await signup(server, t.slug, who.email)
  await setUser(server, t.tenantId, person.user.id, { emailVerified: true })
  const { secret } = await enrolWithRecoveryCodes(server, t.slug, person.accessToken)
  return { userId: person.user.id as string, email: person.email, secret }
}

/** Our own URL of a location the service wrote with PUBLIC_URL. */
const local = (href: string) => {
  const publicUrl = server.deps.config.publicUrl
  return href.startsWith(publicUrl) ? server.url + href.slice(publicUrl.length) : href
}

/**
 * The browser's way from the connection's hosted link through SimpleSAMLphp to our ACS;
 * answers the ACS's answer (redirects not followed).
 */
async function samlSignIn(browser: PageClient, who: SspUser): Promise<Response> {
  let url = `/t/${t.slug}/sso/${connectionId}`
  for (let hop = 0; hop < 5 && !url.startsWith(ssp.baseUrl); hop++) {
    const res = await browser.once('GET', local(new URL(url, server.url).href))
    assert.equal(res.status, 303, await res.text())
    url = res.headers.get('location') ?? ''
  }
  assert.ok(url.startsWith(ssp.baseUrl), `the browser reached the IdP: ${url}`)
  const posted = await signInAtSimpleSaml(ssp, url, who)
  return browser.once('POST', local(posted.action), {
    SAMLResponse: posted.samlResponse,
    RelayState: posted.relayState,
  })
}

const PAGE = () => `/t/${t.slug}/sign-in/sso/second-factor`
const PENDING = () => `__Host-ta_pending_${t.slug}`
const SESSION = () => `__Host-ta_session_${t.slug}`
const rowsOf = async (action: string, userId: string) =>
  (await auditRows(server, t.tenantId, action)).filter((r) => r.userId === userId)

/** The amr of the browser's page session, read from its sealed cookie. */
function sessionAmr(browser: PageClient): string[] | undefined {
  const sealed = browser.cookies.get(SESSION())
  if (!sealed) return undefined
  return JSON.parse(
    server.deps.cipher.decrypt(decodeURIComponent(sealed), `page-session:${t.tenantId}`),
  ).amr
}

test('SAML under mfaPolicy Required, connection not mfaSatisfied: a TOTP user is sent to the second-factor page after the IdP; a wrong code refused and counted, the right one signs in (amr fed otp mfa)', async () => {
  const user = await enrolledUser(SSP_USERS[0])
  const sessionsBefore = (await sessionRows(server, t.tenantId, user.userId)).length

  const browser = new PageClient(server)
  const acs = await samlSignIn(browser, SSP_USERS[0])
  assert.equal(acs.status, 303, await acs.text())
  assert.equal(acs.headers.get('location'), PAGE())
  assert.ok(browser.cookies.get(PENDING()), 'the pending sign-in is bound to this browser')
  assert.match(
    browser.setCookieLines.get(PENDING()) ?? '',
    /; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=300$/,
  )
  // Linked, but no session yet.
  assert.equal(browser.cookies.get(SESSION()), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore)
  const linked = await rowsOf('SsoIdentityLinked', user.userId)
  assert.equal(linked.length, 1)
  assert.equal(linked[0].metadata?.connectionId, connectionId)
  assert.equal(linked[0].metadata?.subject, SSP_USERS[0].email)
  assert.equal((await rowsOf('UserLogin', user.userId)).length, 0)

  const page = await browser.get(PAGE())
  assert.equal(page.status, 200)
  assert.match(page.html, /name="totpCode"/)

  // A wrong code: refused, audited with the connection, counted; no session.
  const wrong = await browser.post(PAGE(), { method: 'totp', totpCode: '000000' })
  assert.equal(wrong.status, 401)
  assert.match(wrong.html, /id="totpCode-error"/)
  const failed = await rowsOf('UserLoginFailed', user.userId)
  assert.equal(failed.length, 1)
  assert.equal(failed[0].metadata?.reason, 'invalid_mfa_code')
  assert.equal(failed[0].metadata?.connectionId, connectionId)
  assert.equal(browser.cookies.get(SESSION()), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore)

  // The right code: the session, the second factor in its amr and audit rows.
  const right = await browser.post(PAGE(), {
    method: 'totp',
    totpCode: totpAt(server, user.secret),
  })
  assert.equal(right.status, 200, right.html)
  assert.equal(new URL(right.url).pathname, `/t/${t.slug}/account`)
  assert.ok(right.html.includes(SSP_USERS[0].email), 'signed in as the IdP user')
  assert.deepEqual(sessionAmr(browser), ['fed', 'otp', 'mfa'])
  assert.equal(browser.cookies.get(PENDING()), undefined)
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore + 1)
  const logins = await rowsOf('UserLogin', user.userId)
  assert.equal(logins.length, 1)
  assert.equal(logins[0].metadata?.method, 'sso')
  assert.equal(logins[0].metadata?.connectionId, connectionId)
  const verified = await rowsOf('MfaTotpVerified', user.userId)
  assert.equal(verified.at(-1)?.metadata?.flow, 'sso')
})

test('SAML under mfaPolicy Required, connection mfaSatisfied: the same kind of TOTP user is signed in at the ACS, no second-factor page', async () => {
  const satisfied = await server.request(
    'PATCH',
    `/v1/${t.slug}/sso-connections/${connectionId}`,
    { mfaSatisfied: true },
    { token: t.admin.accessToken },
  )
  assert.equal(satisfied.status, 200, JSON.stringify(satisfied.body))
  assert.equal(satisfied.body.connection.mfaSatisfied, true)
  const user = await enrolledUser(SSP_USERS[1])
  const sessionsBefore = (await sessionRows(server, t.tenantId, user.userId)).length

  const browser = new PageClient(server)
  const acs = await samlSignIn(browser, SSP_USERS[1])
  assert.equal(acs.status, 303, await acs.text())
  assert.equal(acs.headers.get('location'), `/t/${t.slug}/account`)
  assert.equal(browser.cookies.get(PENDING()), undefined)
  assert.ok(browser.cookies.get(SESSION()), 'the page session is set')
  // The connection's word meets the policy; it proves no factor here, so none is claimed.
  assert.deepEqual(sessionAmr(browser), ['fed'])
  assert.equal((await sessionRows(server, t.tenantId, user.userId)).length, sessionsBefore + 1)
  const logins = await rowsOf('UserLogin', user.userId)
  assert.equal(logins.length, 1)
  assert.equal(logins[0].metadata?.connectionId, connectionId)
  const sso = (await rowsOf('MfaTotpVerified', user.userId)).filter(
    (r) => r.metadata?.flow === 'sso',
  )
  assert.equal(sso.length, 0, 'no code was asked')
  const account = await browser.get(`/t/${t.slug}/account`)
  assert.equal(account.status, 200)
  assert.ok(account.html.includes(SSP_USERS[1].email), 'signed in as the IdP user')
})
