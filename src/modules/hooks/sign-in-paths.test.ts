// Hooks on the federated sign-in paths (CONTRACT §21): an OIDC SSO connection (a real
// oidc-provider upstream), a SAML connection (responses signed by a key of the test's
// own, as the ACS tests do), and the SPEC's identity provider (the same upstream), each
// through the sign-in pipeline's one place: before_sign_up before a JIT account is made
// (a deny creates nothing), before_sign_in for an existing account, `context.method`
// `sso` / `idp`, the hook's message on the hosted page, HookDenied audited; and
// custom_access_token's claims in the FIRST access token of such a sign-in. The receivers
// are real HTTP servers checked with the standardwebhooks package.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { after, before, describe, type TestContext, test } from 'node:test'
import { auditMark, auditSince, tenantSnapshot, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  callbackPath,
  connectedTenant,
  discoveryConfig,
  newAccount,
  roundTrip,
} from '../../../test/fixtures/oauth.ts'
import { passkeySignIn, registerPasskey } from '../../../test/fixtures/passkeys.ts'
import {
  assertionXml,
  b64,
  idpKey,
  newId,
  responseXml,
  sign,
} from '../../../test/fixtures/saml-responses.ts'
import { connectOidcIdp } from '../../../test/fixtures/sso-oidc.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import {
  type IdpAccount,
  type OidcProviderFixture,
  startOidcProvider,
} from '../../../test/oidc-provider.ts'
import { continuesTo, PageClient, textOf } from '../../../test/web/page-client.ts'

let server: TestServer
let upstream: OidcProviderFixture
before(async () => {
  upstream = await startOidcProvider()
  server = await startServer({ idp: discoveryConfig(upstream.issuer), webhookAllowPrivate: true })
})
after(async () => {
  await server?.close()
  await upstream?.close()
})

const hex = () => randomBytes(4).toString('hex')

/** The custom_access_token hook's secret is shown once: the tests keep it by tenant. */
const secrets = new Map<string, string>()
async function claimsSecretOf(tenant: TenantFixture): Promise<string> {
  return secrets.get(tenant.tenantId) ?? ''
}

function reply(body: unknown) {
  return (_n: number, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}

async function addHook(tenant: TenantFixture, event: string, url: string) {
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/hooks`,
    { event, url },
    { token: tenant.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  if (event === 'custom_access_token') secrets.set(tenant.tenantId, res.body.secret)
  return res.body.secret as string
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))
}

/** The access token of the browser's page session (its sealed cookie, opened here). */
function pageAccessToken(browser: PageClient, tenant: TenantFixture): string {
  for (const value of browser.cookies.values()) {
    try {
      const opened = JSON.parse(
        server.deps.cipher.decrypt(decodeURIComponent(value), `page-session:${tenant.tenantId}`),
      )
      if (typeof opened.accessToken === 'string') return opened.accessToken
    } catch {
      // Another cookie.
    }
  }
  throw new Error('no page session')
}

/** The browser's way through "Sign in with SSO" to the callback's answer (oidc-sso.test.ts). */
async function ssoSignIn(browser: PageClient, t: TenantFixture, who: IdpAccount) {
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const form = await browser.once('POST', `/t/${t.slug}/sign-in/sso`, {
    _csrf: browser.csrf(),
    email: who.email ?? '',
  })
  const startPath = continuesTo(await form.text()) ?? ''
  const started = await browser.once('GET', startPath)
  assert.equal(started.status, 303)
  const back = await upstream.authorize(started.headers.get('location') ?? '', who)
  return browser.once('GET', back.pathname + back.search)
}

describe('OIDC SSO', () => {
  test('before_sign_up denies a JIT sign-up: the hook’s message on the page, no user, HookDenied; method sso', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const domain = `sso-${hex()}.example.com`
    const connectionId = await connectOidcIdp(server, tenant, upstream, 'Corp', [domain])
    const sink = await receiver(t, reply({ decision: 'deny', message: 'Ask IT for access.' }))
    const secret = await addHook(tenant, 'before_sign_up', sink.url)
    const who = { sub: `sub-${hex()}`, email: `new-${hex()}@${domain}`, email_verified: true }
    const mark = await auditMark(server, tenant.tenantId)
    const before = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    const browser = new PageClient(server)
    const callback = await ssoSignIn(browser, tenant, who)
    const page = await callback.text()
    assert.equal(callback.status, 403, page)
    assert.match(textOf(page), /Ask IT for access\./)
    assert.match(page, /Error code: hook_denied/)
    assert.equal(await userByEmail(server, tenant.tenantId, who.email), undefined)
    assert.deepEqual(await tenantSnapshot(server, tenant.tenantId, { audit: false }), before)
    const events = await auditSince(server, tenant.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['HookDenied'],
    )
    assert.equal(events[0].metadata.method, 'sso')
    assert.equal(sink.received.length, 1)
    const call = verify(secret, sink.received[0])
    assert.equal(call.event, 'before_sign_up')
    assert.equal(call.context.method, 'sso')
    assert.deepEqual(call.user, { email: who.email, role: 'Member', roles: [] })
    assert.ok(connectionId)
  })

  test('before_sign_in denies an existing user; custom_access_token’s claims are in the first token', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const domain = `sso-${hex()}.example.com`
    await connectOidcIdp(server, tenant, upstream, 'Corp', [domain])
    const who = { sub: `sub-${hex()}`, email: `known-${hex()}@${domain}`, email_verified: true }
    const claims = await receiver(t, reply({ claims: { customer: 'c-42', sub: 'stolen' } }))
    const claimsSecret = await addHook(tenant, 'custom_access_token', claims.url)

    // First sign-in: JIT (no before_sign_up hook), the claims in its first token.
    const browser = new PageClient(server)
    const first = await ssoSignIn(browser, tenant, who)
    assert.equal(first.status, 303, await first.text())
    const token = claimsOf(pageAccessToken(browser, tenant))
    assert.equal(token.customer, 'c-42')
    const user = await userByEmail(server, tenant.tenantId, who.email)
    assert.ok(user)
    assert.equal(token.sub, user.id, 'a reserved claim is dropped')
    const call = verify(claimsSecret, claims.received[0])
    assert.equal(call.event, 'custom_access_token')
    assert.equal(call.context.method, 'sso')

    // Then before_sign_in refuses the same user.
    const gate = await receiver(t, reply({ decision: 'deny', message: 'Billing froze this.' }))
    const gateSecret = await addHook(tenant, 'before_sign_in', gate.url)
    const mark = await auditMark(server, tenant.tenantId)
    const before = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    const again = await ssoSignIn(new PageClient(server), tenant, who)
    const page = await again.text()
    assert.equal(again.status, 403, page)
    assert.match(textOf(page), /Billing froze this\./)
    assert.deepEqual(await tenantSnapshot(server, tenant.tenantId, { audit: false }), before)
    const events = await auditSince(server, tenant.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId]),
      [['HookDenied', user.id]],
    )
    const asked = verify(gateSecret, gate.received[0])
    assert.equal(asked.event, 'before_sign_in')
    assert.equal(asked.user.id, user.id)
    assert.equal(asked.context.method, 'sso')
    assert.equal(claims.received.length, 1, 'no claims asked for a refused sign-in')
  })
})

describe('SAML SSO', () => {
  const key = idpKey('Hook test IdP')
  const IDP_ENTITY = 'https://idp.hooks.example/saml'

  async function samlSetup() {
    const tenant = await createTenant(server)
    const domain = `saml-${hex()}.example`
    const res = await server.request(
      'POST',
      `/v1/${tenant.slug}/sso-connections`,
      {
        name: 'Corp SAML',
        type: 'saml',
        domains: [domain],
        saml: {
          idpEntityId: IDP_ENTITY,
          idpSsoUrl: 'https://idp.hooks.example/sso',
          idpCertificates: [key.certificate],
        },
      },
      { token: tenant.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const id = res.body.connection.id as string
    const publicUrl = server.deps.config.publicUrl
    return {
      tenant,
      domain,
      path: `/v1/${tenant.slug}/sso/${id}`,
      entityId: `${publicUrl}/v1/${tenant.slug}/sso/${id}`,
      acsUrl: `${publicUrl}/v1/${tenant.slug}/sso/${id}/saml/acs`,
    }
  }

  async function acs(s: Awaited<ReturnType<typeof samlSetup>>, email: string) {
    const started = await fetch(`${server.url}${s.path}/saml/start`, { redirect: 'manual' })
    assert.equal(started.status, 303)
    const { inflateRawSync } = await import('node:zlib')
    const location = new URL(started.headers.get('location') ?? '')
    const request = inflateRawSync(
      Buffer.from(location.searchParams.get('SAMLRequest') ?? '', 'base64'),
    ).toString()
    const requestId = /ID="([^"]+)"/.exec(request)?.[1] ?? ''
    const cookie = (started.headers.getSetCookie()[0] ?? '').split(';')[0]
    const now = server.clock.now()
    const minutes = (n: number) => new Date(now.getTime() + n * 60_000)
    const f = {
      responseId: newId(),
      assertionId: newId(),
      issuer: IDP_ENTITY,
      destination: s.acsUrl,
      inResponseTo: requestId,
      scdInResponseTo: requestId,
      recipient: s.acsUrl,
      audience: s.entityId,
      issueInstant: now,
      notBefore: minutes(-1),
      notOnOrAfter: minutes(5),
      scdNotOnOrAfter: minutes(5),
      nameId: email,
      nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      attributes: {},
      status: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    }
    const xml = responseXml(f, sign(assertionXml(f), f.assertionId, key))
    const res = await fetch(`${server.url}${s.path}/saml/acs`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ SAMLResponse: b64(xml) }).toString(),
    })
    return { status: res.status, text: await res.text() }
  }

  test('before_sign_up denies a SAML JIT sign-up with the hook’s message: nothing created, HookDenied', async (t: TestContext) => {
    const s = await samlSetup()
    const sink = await receiver(t, reply({ decision: 'deny', message: 'Not this quarter.' }))
    const secret = await addHook(s.tenant, 'before_sign_up', sink.url)
    const email = `ada-${hex()}@${s.domain}`
    const mark = await auditMark(server, s.tenant.tenantId)
    const before = await tenantSnapshot(server, s.tenant.tenantId, { audit: false })
    const got = await acs(s, email)
    assert.equal(got.status, 403, got.text.slice(0, 500))
    assert.match(textOf(got.text), /Not this quarter\./)
    // Only the assertion's id is kept, so that it cannot be replayed.
    const after = await tenantSnapshot(server, s.tenant.tenantId, { audit: false })
    assert.equal(after.ssoSamlAssertions.length, 1)
    assert.deepEqual({ ...after, ssoSamlAssertions: [] }, before)
    assert.deepEqual(
      (await auditSince(server, s.tenant.tenantId, mark)).map((e) => e.action),
      ['HookDenied'],
    )
    const call = verify(secret, sink.received[0])
    assert.equal(call.context.method, 'sso')
    assert.equal(call.user.email, email)
  })

  test('an allow signs in; the hook is told the method', async (t: TestContext) => {
    const s = await samlSetup()
    const sink = await receiver(t, reply({ decision: 'allow' }))
    await addHook(s.tenant, 'before_sign_up', sink.url)
    const email = `ada-${hex()}@${s.domain}`
    const got = await acs(s, email)
    assert.equal(got.status, 303, got.text.slice(0, 500))
    assert.ok(await userByEmail(server, s.tenant.tenantId, email))
    assert.equal(sink.received.length, 1)
  })
})

describe('the identity provider (SPEC idp)', () => {
  test('API: before_sign_up denies a new identity (403 hook_denied, the message, no user); method idp', async (t: TestContext) => {
    const tenant = await connectedTenant(server, upstream)
    const sink = await receiver(t, reply({ decision: 'deny', message: 'Closed for now.' }))
    const secret = await addHook(tenant, 'before_sign_up', sink.url)
    const account = newAccount()
    const mark = await auditMark(server, tenant.tenantId)
    const before = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    const back = await roundTrip(server, upstream, tenant.slug, account)
    const res = await server.request('GET', callbackPath(back))
    expectError(res, 403, 'hook_denied')
    assert.equal(res.body.message, 'Closed for now.')
    assert.equal(await userByEmail(server, tenant.tenantId, account.email ?? ''), undefined)
    const after = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    // Only the spent state differs: the callback used it up.
    assert.deepEqual({ ...after, oauthStates: [] }, { ...before, oauthStates: [] })
    assert.deepEqual(
      (await auditSince(server, tenant.tenantId, mark)).map((e) => e.action),
      ['HookDenied'],
    )
    const call = verify(secret, sink.received[0])
    assert.equal(call.context.method, 'idp')
  })

  test('API: the first token carries custom_access_token’s claims', async (t: TestContext) => {
    const tenant = await connectedTenant(server, upstream)
    const sink = await receiver(t, reply({ claims: { plan: 'gold' } }))
    const secret = await addHook(tenant, 'custom_access_token', sink.url)
    const back = await roundTrip(server, upstream, tenant.slug, newAccount())
    const res = await server.request('GET', callbackPath(back))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(claimsOf(res.body.accessToken).plan, 'gold')
    assert.equal(verify(secret, sink.received[0]).context.method, 'idp')
  })

  test('hosted pages: before_sign_in’s message shows on the sign-in page; a forged message does not', async (t: TestContext) => {
    const tenant = await connectedTenant(server, upstream)
    const account = newAccount()
    // A first sign-in makes the account.
    const first = await server.request(
      'GET',
      callbackPath(await roundTrip(server, upstream, tenant.slug, account)),
    )
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const sink = await receiver(t, reply({ decision: 'deny', message: 'Account frozen.' }))
    await addHook(tenant, 'before_sign_in', sink.url)
    const browser = new PageClient(server)
    const start = await browser.once('GET', `/t/${tenant.slug}/sign-in/idp`)
    assert.equal(start.status, 303)
    const back = await upstream.authorize(start.headers.get('location') ?? '', account)
    const callback = await browser.once('GET', back.pathname + back.search)
    assert.equal(callback.status, 303)
    const location = callback.headers.get('location') ?? ''
    assert.match(location, /idp=hook_denied&words=/)
    const page = await browser.get(location)
    assert.match(textOf(page.html), /Account frozen\./)
    const forged = await browser.get(
      `/t/${tenant.slug}/sign-in?idp=hook_denied&words=${encodeURIComponent('Call +1 555 0100')}`,
    )
    assert.doesNotMatch(textOf(forged.html), /555/)
    assert.match(textOf(forged.html), /refused by the workspace/)
  })
})

describe('passkeys', () => {
  test('before_sign_in denies a passkey sign-in with the hook’s message (method passkey), no session; custom claims in its token', async (t: TestContext) => {
    const tenant = await createTenant(server)
    const member = await signup(server, tenant.slug, uniqueEmail('passkey'))
    const { authenticator } = await registerPasskey(server, tenant.slug, member.accessToken)
    const claims = await receiver(t, reply({ claims: { tier: 'silver' } }))
    await addHook(tenant, 'custom_access_token', claims.url)
    const allowed = await passkeySignIn(server, tenant.slug, authenticator)
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body))
    assert.equal(claimsOf(allowed.body.accessToken).tier, 'silver')
    assert.equal(verify(await claimsSecretOf(tenant), claims.received[0]).context.method, 'passkey')

    const gate = await receiver(t, reply({ decision: 'deny', message: 'Passkeys paused.' }))
    const secret = await addHook(tenant, 'before_sign_in', gate.url)
    const mark = await auditMark(server, tenant.tenantId)
    const before = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    const denied = await passkeySignIn(server, tenant.slug, authenticator)
    expectError(denied, 403, 'hook_denied')
    assert.equal(denied.body.message, 'Passkeys paused.')
    const after = await tenantSnapshot(server, tenant.tenantId, { audit: false })
    // The ceremony's challenge is spent; nothing else changed.
    assert.deepEqual({ ...after, challenges: [] }, { ...before, challenges: [] })
    assert.deepEqual(
      (await auditSince(server, tenant.tenantId, mark)).map((e) => e.action),
      ['HookDenied'],
    )
    const call = verify(secret, gate.received[0])
    assert.equal(call.context.method, 'passkey')
    assert.equal(call.user.id, member.user.id)
  })
})
