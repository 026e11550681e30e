// An SSO connection's organizationId (CONTRACT §18, JIT: "an SSO sign-in through it makes the
// user a member of that organization"): set on create and PATCH and shown in the record;
// an unknown organization, another tenant's, a malformed id, one set by an API key, or one
// whose JIT roles the editor could not grant, each refused with nothing changed. A sign-in
// through the connection, OIDC (a real OpenID provider) and SAML (responses signed here),
// makes a new member with the organization's jit.roles in the sign-in's transaction,
// audited OrganizationMemberAdded (via "sso", the connection named); a member already is
// left as they are, and nothing is recorded. Deleting the organization leaves the
// connection signing in, naming none (said in OrganizationDeleted).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { inflateRawSync } from 'node:zlib'
import { auditRows, setUser, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  assertionXml,
  b64,
  idpKey,
  newId,
  responseXml,
  sign,
} from '../../../test/fixtures/saml-responses.ts'
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
import { continuesTo, PageClient } from '../../../test/web/page-client.ts'
import { SAML_COOKIE } from './saml-binding.ts'

let server: TestServer
let idp: OidcProviderFixture
let t: TenantFixture
let acme: string
let oidcConnection: string
const hex = () => randomBytes(4).toString('hex')
const domain = `org-${hex()}.example.com`
const samlDomain = `saml-${hex()}.example.com`
const key = idpKey('Organization test IdP')
const IDP_ENTITY = 'https://idp.acme.example/saml'

const call = (method: string, path: string, body?: unknown, token = t.admin.accessToken) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token })

async function ok(method: string, path: string, body?: unknown) {
  const res = await call(method, path, body)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

before(async () => {
  idp = await startOidcProvider()
  server = await startServer({ webhookAllowPrivate: true })
  t = await createTenant(server)
  await ok('POST', 'roles', { name: 'Billing', kind: 'organization', resourceScopes: [] })
  acme = (
    await ok('POST', 'organizations', {
      name: 'Acme',
      jit: { emailDomains: [], roles: ['Billing'] },
    })
  ).organization.id
  oidcConnection = await connectOidcIdp(server, t, idp, 'Acme IdP', [domain], {
    organizationId: acme,
  })
})

after(async () => {
  await server?.close()
  await idp?.close()
})

async function oidcSignIn(who: IdpAccount) {
  const browser = new PageClient(server)
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const form = await browser.once('POST', `/t/${t.slug}/sign-in/sso`, {
    _csrf: browser.csrf(),
    email: who.email ?? '',
  })
  const started = await browser.once('GET', continuesTo(await form.text()) ?? '')
  const back = await idp.authorize(started.headers.get('location') ?? '', who)
  const callback = await browser.once('GET', back.pathname + back.search)
  assert.equal(callback.status, 303, await callback.text())
}

const members = async (organizationId = acme) =>
  (
    (await ok('GET', `organizations/${organizationId}/members`)).items as {
      userId: string
      roles: string[]
    }[]
  ).map((m) => [m.userId, m.roles])

const added = async (userId: string) =>
  (await auditRows(server, t.tenantId, 'OrganizationMemberAdded'))
    .filter((r) => r.userId === userId)
    .map((r) => r.metadata)

test('the connection record names its organization; PATCH sets another and null clears it', async () => {
  const connection = (await ok('GET', `sso-connections/${oidcConnection}`)).connection
  assert.equal(connection.organizationId, acme)
  const other = (await ok('POST', 'organizations', { name: `Other ${hex()}` })).organization.id
  const made = await ok('POST', 'sso-connections', {
    name: 'Spare',
    type: 'oidc',
    domains: [`spare-${hex()}.example.com`],
    oidc: { issuer: idp.issuer, clientId: 'c', clientSecret: 's' },
  })
  assert.equal(made.connection.organizationId, null, 'none unless named')
  const id = made.connection.id
  const moved = await ok('PATCH', `sso-connections/${id}`, { organizationId: other })
  assert.equal(moved.connection.organizationId, other)
  const listed = (await ok('GET', 'sso-connections?limit=200')).items.find(
    (c: { id: string }) => c.id === id,
  )
  assert.equal(listed.organizationId, other)
  const cleared = await ok('PATCH', `sso-connections/${id}`, { organizationId: null })
  assert.equal(cleared.connection.organizationId, null)
  const changed = (await auditRows(server, t.tenantId, 'SsoConnectionUpdated')).filter(
    (r) => (r.metadata as { connectionId: string }).connectionId === id,
  )
  assert.deepEqual(
    changed.map((r) => r.metadata),
    [
      { connectionId: id, changed: ['organizationId'] },
      { connectionId: id, changed: ['organizationId'] },
    ],
  )
  await ok('DELETE', `sso-connections/${id}`)
})

test('an unknown organization, another tenant’s or a malformed id is 400 validation at organizationId, nothing made or changed', async () => {
  const stranger = await createTenant(server)
  const theirs = (
    await server.request(
      'POST',
      `/v1/${stranger.slug}/organizations`,
      { name: 'Theirs' },
      { token: stranger.admin.accessToken },
    )
  ).body.organization.id
  const body = (organizationId: unknown) => ({
    name: 'Refused',
    type: 'oidc',
    domains: [`refused-${hex()}.example.com`],
    oidc: { issuer: idp.issuer, clientId: 'c', clientSecret: 's' },
    organizationId,
  })
  await unchanged(server, [t.tenantId, stranger.tenantId], async () => {
    for (const id of ['0190a6f0-0000-7000-8000-000000000000', theirs]) {
      expectValidation(await call('POST', 'sso-connections', body(id)), 'body.organizationId')
      expectValidation(
        await call('PATCH', `sso-connections/${oidcConnection}`, { organizationId: id }),
        'body.organizationId',
      )
    }
    expectValidation(await call('POST', 'sso-connections', body('acme')), 'body.organizationId')
    expectValidation(
      await call('PATCH', `sso-connections/${oidcConnection}`, { organizationId: 'acme' }),
      'body.organizationId',
    )
  })
  assert.equal(
    (await ok('GET', `sso-connections/${oidcConnection}`)).connection.organizationId,
    acme,
  )
})

test('an API key may not set organizationId, nor an editor lacking the JIT roles’ scopes; nothing changed', async () => {
  const apiKey = await insertApiKey(server, t.tenantId)
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await call('PATCH', `sso-connections/${oidcConnection}`, { organizationId: null }, apiKey),
      403,
      'api_key_not_allowed',
    )
  })
  // An organization whose JIT role grants a scope the editor (connections:write only) lacks.
  const resource = `https://api-${hex()}.example.com`
  await ok('POST', 'api-resources', {
    name: 'Reports',
    identifier: resource,
    scopes: [{ name: 'read', roles: ['Admin'] }],
  })
  await ok('POST', 'roles', {
    name: 'Readers',
    kind: 'organization',
    resourceScopes: [{ resource, scopes: ['read'] }],
  })
  const guarded = (
    await ok('POST', 'organizations', {
      name: 'Guarded',
      jit: { emailDomains: [], roles: ['Readers'] },
    })
  ).organization.id
  await ok('POST', 'roles', { name: 'Connectors', permissions: ['connections:write'] })
  const editor = await signup(server, t.slug)
  await ok('PUT', `users/${editor.user.id}/roles`, { roles: ['Connectors'] })
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await call(
        'PATCH',
        `sso-connections/${oidcConnection}`,
        { organizationId: guarded },
        editor.accessToken,
      ),
      403,
      'permission_required',
    )
  })
  // Acme's JIT role holds no scope: the same editor may name it.
  const named = await call(
    'PATCH',
    `sso-connections/${oidcConnection}`,
    { organizationId: acme },
    editor.accessToken,
  )
  assert.equal(named.status, 200, JSON.stringify(named.body))
})

test('an OIDC sign-in through the connection makes a new member with the organization’s JIT roles; a member already is left as they are', async () => {
  const who: IdpAccount = {
    sub: `sub-${hex()}`,
    email: `p-${hex()}@${domain}`,
    email_verified: true,
  }
  await oidcSignIn(who)
  const user = await userByEmail(server, t.tenantId, who.email ?? '')
  assert.ok(user)
  assert.deepEqual(await members(), [[user.id, ['Billing']]])
  assert.deepEqual(await added(user.id), [
    { organizationId: acme, roles: ['Billing'], via: 'sso', connectionId: oidcConnection },
  ])
  // The admin takes the role away; the next sign-in changes nothing and records nothing.
  await ok('PUT', `organizations/${acme}/members/${user.id}`, { roles: [] })
  await oidcSignIn(who)
  assert.deepEqual(await members(), [[user.id, []]])
  assert.equal((await added(user.id)).length, 1)
})

test('a SAML sign-in through a connection naming the organization makes the user a member', async () => {
  // An existing user of the domain, confirmed: linked by address, and joined.
  const person = await signup(server, t.slug, `ada-${hex()}@${samlDomain}`)
  await setUser(server, t.tenantId, person.user.id, { emailVerified: true })
  const created = await ok('POST', 'sso-connections', {
    name: 'Acme SAML',
    type: 'saml',
    domains: [samlDomain],
    organizationId: acme,
    saml: {
      idpEntityId: IDP_ENTITY,
      idpSsoUrl: 'https://idp.acme.example/sso',
      idpCertificates: [key.certificate],
    },
  })
  const id = created.connection.id as string
  const path = `/v1/${t.slug}/sso/${id}`
  const publicUrl = server.deps.config.publicUrl
  const acsUrl = `${publicUrl}${path}/saml/acs`
  const started = await fetch(`${server.url}${path}/saml/start`, { redirect: 'manual' })
  assert.equal(started.status, 303)
  const request = inflateRawSync(
    Buffer.from(
      new URL(started.headers.get('location') ?? '').searchParams.get('SAMLRequest') ?? '',
      'base64',
    ),
  ).toString()
  const requestId = /ID="([^"]+)"/.exec(request)?.[1] ?? ''
  const cookie =
    started.headers
      .getSetCookie()
      .find((c) => c.startsWith(`${SAML_COOKIE}=`) || c.startsWith(`__Host-${SAML_COOKIE}_`))
      ?.split(';')[0] ?? ''
  const now = server.clock.now()
  const minutes = (n: number) => new Date(now.getTime() + n * 60_000)
  const f = {
    responseId: newId(),
    assertionId: newId(),
    issuer: IDP_ENTITY,
    destination: acsUrl,
    inResponseTo: requestId,
    scdInResponseTo: requestId,
    recipient: acsUrl,
    audience: `${publicUrl}${path}`,
    issueInstant: now,
    notBefore: minutes(-1),
    notOnOrAfter: minutes(5),
    scdNotOnOrAfter: minutes(5),
    nameId: person.email,
    nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    attributes: {},
    status: 'urn:oasis:names:tc:SAML:2.0:status:Success',
  }
  const xml = responseXml(f, sign(assertionXml(f), f.assertionId, key))
  const posted = await fetch(`${server.url}${path}/saml/acs`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ SAMLResponse: b64(xml) }).toString(),
  })
  assert.equal(posted.status, 303, (await posted.text()).slice(0, 500))
  const listed = await members()
  assert.deepEqual(
    listed.find(([userId]) => userId === person.user.id),
    [person.user.id, ['Billing']],
  )
  assert.deepEqual(await added(person.user.id), [
    { organizationId: acme, roles: ['Billing'], via: 'sso', connectionId: id },
  ])
})

test('deleting the organization leaves the connection signing in, naming none; OrganizationDeleted says which', async () => {
  const name = `Gone ${hex()}`
  const gone = (await ok('POST', 'organizations', { name })).organization.id
  const spareDomain = `gone-${hex()}.example.com`
  const id = await connectOidcIdp(server, t, idp, 'Gone IdP', [spareDomain], {
    organizationId: gone,
  })
  await ok('DELETE', `organizations/${gone}`)
  const connection = (await ok('GET', `sso-connections/${id}`)).connection
  assert.equal(connection.organizationId, null)
  const deleted = (await auditRows(server, t.tenantId, 'OrganizationDeleted')).find(
    (r) => (r.metadata as { organizationId: string }).organizationId === gone,
  )
  assert.deepEqual(deleted?.metadata, {
    organizationId: gone,
    name,
    ssoConnections: [id],
  })
  const who: IdpAccount = {
    sub: `sub-${hex()}`,
    email: `g-${hex()}@${spareDomain}`,
    email_verified: true,
  }
  await oidcSignIn(who)
  const user = await userByEmail(server, t.tenantId, who.email ?? '')
  assert.ok(user)
  assert.deepEqual(await added(user.id), [])
})
