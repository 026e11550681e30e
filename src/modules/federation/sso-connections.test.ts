// SSO connections (CONTRACT §12): created, listed, read, changed and deleted by an Admin or
// an API key (which cannot create one nor change what it trusts), each audited; the OIDC secret sealed and never answered; domains folded to
// lowercase punycode and owned by one connection of a tenant (409 domain_taken); SAML given
// as metadata XML or as fields; every bad input refused with nothing changed; another
// tenant's connection is 404 and a Member 403.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { actionsSince, auditMark, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { ssoConnections } from '../../db/schema.ts'
import { FieldCipher } from '../../lib/crypto.ts'
import { rotateColumn } from '../../lib/rotation.ts'
import { MetadataError, parseIdpMetadata } from './saml-metadata.ts'
import { openSsoSecret, ssoSecretColumn } from './secret.ts'

const CERT = readFileSync(
  new URL('../../../test/fixtures/sso/idp-signing.pem', import.meta.url),
  'utf8',
).trim()
const CERT_BODY = CERT.replace(/-----[A-Z ]+-----|\s/g, '')

const metadata = (entityId = 'https://idp.example.com/saml', extra = '') => `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="${entityId}">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="encryption"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>AAAA</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>
${CERT_BODY}
    </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://idp.example.com/post"/>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.example.com/sso"/>
    ${extra}
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`

let server: TestServer
let t: TenantFixture
let admin: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  admin = t.admin.accessToken
})

const base = (slug = t.slug) => `/v1/${slug}/sso-connections`
const call = (method: string, path: string, body?: unknown, token = admin) =>
  server.request(method, path, body, { token })
const create = (body: unknown, token = admin) => call('POST', base(), body, token)

let seq = 0
const domain = () => `corp${++seq}-${Date.now().toString(36)}.example.com`
const oidcBody = (domains = [domain()]) => ({
  name: 'Okta',
  type: 'oidc',
  domains,
  oidc: { issuer: 'https://corp.okta.example.com', clientId: 'abc', clientSecret: 'sekrit-value' },
})
const samlBody = (domains = [domain()]) => ({
  name: 'Entra',
  type: 'saml',
  domains,
  saml: {
    idpEntityId: 'https://sts.example.net/abc/',
    idpSsoUrl: 'https://login.example.net/abc/saml2',
    idpCertificates: [CERT],
  },
})

async function storedRow(tenantId: string, id: string) {
  const rows = await server.deps.db
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.id, id)))
  return rows[0]
}

test('sso connections: an OIDC connection is created with its secret sealed and never answered; read, listed, patched (secret kept), deleted, each audited', async () => {
  const mark = await auditMark(server, t.tenantId)
  const res = await create({
    ...oidcBody(['Example-Corp.COM', 'exämple.org', 'example-corp.com']),
    jitProvisioning: false,
    defaultRole: 'Admin',
    enforce: true,
    mfaSatisfied: true,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { connection } = res.body
  assert.deepEqual(Object.keys(res.body), ['connection'])
  assert.deepEqual(connection.domains, ['example-corp.com', 'xn--exmple-cua.org'])
  assert.equal(connection.type, 'oidc')
  assert.equal(connection.enabled, true)
  assert.equal(connection.jitProvisioning, false)
  assert.equal(connection.defaultRole, 'Admin')
  assert.equal(connection.enforce, true)
  assert.equal(connection.mfaSatisfied, true)
  assert.equal(connection.hasClientSecret, true)
  assert.equal(connection.saml, null)
  assert.deepEqual(connection.oidc, {
    issuer: 'https://corp.okta.example.com',
    clientId: 'abc',
    scopes: ['openid', 'email', 'profile'],
    hasClientSecret: true,
    redirectUri: `${server.deps.config.publicUrl}/v1/${t.slug}/sso/${connection.id}/oidc/callback`,
  })
  assert.ok(!JSON.stringify(res.body).includes('sekrit-value'))
  const row = await storedRow(t.tenantId, connection.id)
  assert.ok(!row.oidcClientSecretEnc?.includes('sekrit'))
  assert.equal(
    openSsoSecret(server.deps.cipher, t.tenantId, connection.id, row.oidcClientSecretEnc ?? ''),
    'sekrit-value',
  )

  const got = await call('GET', `${base()}/${connection.id}`)
  assert.equal(got.status, 200)
  assert.deepEqual(got.body, { connection })

  const patched = await call('PATCH', `${base()}/${connection.id}`, {
    name: 'Okta EU',
    oidc: { clientId: 'def', scopes: ['email'] },
    enforce: false,
  })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  assert.equal(patched.body.connection.name, 'Okta EU')
  assert.equal(patched.body.connection.oidc.clientId, 'def')
  assert.equal(patched.body.connection.oidc.issuer, 'https://corp.okta.example.com')
  assert.deepEqual(patched.body.connection.oidc.scopes, ['openid', 'email'])
  assert.equal(patched.body.connection.enforce, false)
  const kept = await storedRow(t.tenantId, connection.id)
  assert.equal(kept.oidcClientSecretEnc, row.oidcClientSecretEnc, 'the secret is kept')

  const listed = await call('GET', base())
  assert.equal(listed.status, 200)
  assert.ok(listed.body.items.some((c: { id: string }) => c.id === connection.id))

  const deleted = await call('DELETE', `${base()}/${connection.id}`)
  assert.deepEqual(deleted.body, { ok: true })
  expectError(await call('GET', `${base()}/${connection.id}`), 404, 'not_found')
  // Its domains are free again.
  const again = await create(oidcBody(['example-corp.com']))
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.deepEqual((await actionsSince(server, t.tenantId, mark)).sort(), [
    'SsoConnectionCreated',
    'SsoConnectionCreated',
    'SsoConnectionDeleted',
    'SsoConnectionUpdated',
  ])
})

test('sso connections: SAML by fields or by metadata XML; our entityID, ACS and metadata URL are answered', async () => {
  const byFields = await create(samlBody())
  assert.equal(byFields.status, 200, JSON.stringify(byFields.body))
  const { connection } = byFields.body
  const root = `${server.deps.config.publicUrl}/v1/${t.slug}`
  assert.deepEqual(connection.saml, {
    idpEntityId: 'https://sts.example.net/abc/',
    idpSsoUrl: 'https://login.example.net/abc/saml2',
    idpCertificates: [CERT],
    spEntityId: `${root}/sso/${connection.id}`,
    acsUrl: `${root}/sso/${connection.id}/saml/acs`,
    metadataUrl: `${root}/sso-connections/${connection.id}/saml/metadata`,
  })
  assert.equal(connection.oidc, null)
  assert.equal(connection.hasClientSecret, false)

  const byXml = await create({ ...samlBody(), saml: { idpMetadataXml: metadata() } })
  assert.equal(byXml.status, 200, JSON.stringify(byXml.body))
  assert.equal(byXml.body.connection.saml.idpEntityId, 'https://idp.example.com/saml')
  assert.equal(byXml.body.connection.saml.idpSsoUrl, 'https://idp.example.com/sso')
  assert.deepEqual(byXml.body.connection.saml.idpCertificates, [CERT])

  // PATCH merges one field; metadata replaces all three.
  const moved = await call('PATCH', `${base()}/${connection.id}`, {
    saml: { idpSsoUrl: 'https://login.example.net/new' },
  })
  assert.equal(moved.status, 200, JSON.stringify(moved.body))
  assert.equal(moved.body.connection.saml.idpSsoUrl, 'https://login.example.net/new')
  assert.equal(moved.body.connection.saml.idpEntityId, 'https://sts.example.net/abc/')
  const replaced = await call('PATCH', `${base()}/${connection.id}`, {
    saml: { idpMetadataXml: metadata('https://other.example.com/') },
  })
  assert.equal(replaced.body.connection.saml.idpEntityId, 'https://other.example.com/')
})

test('parseIdpMetadata reads an EntitiesDescriptor, and refuses what is not IdP metadata', () => {
  const inner = metadata().replace('<?xml version="1.0"?>', '')
  const wrapped = `<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata">${inner}</md:EntitiesDescriptor>`
  assert.equal(parseIdpMetadata(wrapped).idpEntityId, 'https://idp.example.com/saml')
  for (const bad of [
    'not xml',
    '<a>',
    '<!DOCTYPE x [<!ENTITY e "x">]><x/>',
    metadata().replace(/HTTP-Redirect/, 'HTTP-Artifact'),
    metadata().replace(/use="signing"/, 'use="encryption"'),
    metadata().replace(/ entityID="[^"]*"/, ''),
    '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="x"/>',
  ]) {
    assert.throws(() => parseIdpMetadata(bad), MetadataError, bad.slice(0, 60))
  }
})

test('sso connections: a domain belongs to one connection of a tenant (409 domain_taken, nothing changed); another tenant may own it', async () => {
  const owned = domain()
  const first = await create(oidcBody([owned]))
  assert.equal(first.status, 200)
  const other = await create(samlBody())
  const otherId = other.body.connection.id
  await unchanged(server, t.tenantId, async () => {
    expectError(await create(oidcBody([domain(), owned.toUpperCase()])), 409, 'domain_taken')
    expectError(
      await call('PATCH', `${base()}/${otherId}`, { domains: [owned], name: 'changed' }),
      409,
      'domain_taken',
    )
  })
  const tenant = await createTenant(server)
  const theirs = await call('POST', base(tenant.slug), oidcBody([owned]), tenant.admin.accessToken)
  assert.equal(theirs.status, 200, JSON.stringify(theirs.body))
})

test('sso connections: bad bodies are 400 validation and change nothing', async () => {
  const created = await create(oidcBody())
  const id = created.body.connection.id
  const saml = await create(samlBody())
  const samlId = saml.body.connection.id
  const o = oidcBody()
  const s = samlBody()
  const bad: unknown[] = [
    { ...o, domains: [] },
    { ...o, domains: ['localhost'] },
    { ...o, domains: ['1.2.3.4'] },
    { ...o, domains: ['bad domain.com'] },
    { ...o, domains: ['under_score.com'] },
    { ...o, domains: ['example.com.'] },
    { ...o, domains: ['-x.example.com'] },
    { ...o, domains: 'example.com' },
    { ...o, type: 'ldap' },
    { ...o, name: '' },
    { ...o, defaultRole: 'Owner' },
    { ...o, enforce: 'true' },
    { ...o, oidc: undefined },
    { ...o, saml: s.saml },
    { ...o, oidc: { ...o.oidc, issuer: 'http://corp.example.com' } },
    { ...o, oidc: { ...o.oidc, issuer: 'not a url' } },
    { ...o, oidc: { ...o.oidc, issuer: 'https://u:p@corp.example.com' } },
    { ...o, oidc: { ...o.oidc, issuer: 'https://corp.example.com/#f' } },
    { ...o, oidc: { ...o.oidc, issuer: 'https://corp.example.com/?q=1' } },
    { ...o, oidc: { ...o.oidc, clientSecret: undefined } },
    { ...o, oidc: { ...o.oidc, scopes: ['bad scope'] } },
    { ...s, saml: undefined },
    { ...s, oidc: o.oidc },
    { ...s, saml: { ...s.saml, idpCertificates: [] } },
    { ...s, saml: { ...s.saml, idpCertificates: ['not a certificate'] } },
    {
      ...s,
      saml: { ...s.saml, idpCertificates: [`${CERT.slice(0, 300)}\n-----END CERTIFICATE-----`] },
    },
    { ...s, saml: { ...s.saml, idpSsoUrl: 'ftp://idp.example.com' } },
    { ...s, saml: { idpEntityId: 'x', idpCertificates: [CERT] } },
    { ...s, saml: { idpMetadataXml: 'not xml' } },
    { ...s, saml: { idpMetadataXml: metadata(), idpEntityId: 'x' } },
    { ...s, saml: { idpMetadataXml: metadata().replace(/use="signing"/, 'use="encryption"') } },
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const body of bad) {
      try {
        expectValidation(await create(body))
      } catch (error) {
        assert.fail(`${JSON.stringify(body).slice(0, 200)}: ${(error as Error).message}`)
      }
    }
    for (const [target, body] of [
      [id, { domains: [] }],
      [id, { domains: ['nodot'] }],
      [id, { oidc: { issuer: 'http://corp.example.com' } }],
      [id, { saml: { idpSsoUrl: 'https://x.example.com' } }],
      [samlId, { saml: { idpCertificates: [] } }],
      [samlId, { saml: { idpCertificates: ['nope'] } }],
      [samlId, { oidc: { clientId: 'x' } }],
      [samlId, { saml: { idpMetadataXml: '<x/>' } }],
      [id, { defaultRole: 'Root' }],
    ] as const) {
      try {
        expectValidation(await call('PATCH', `${base()}/${target}`, body))
      } catch (error) {
        assert.fail(`PATCH ${JSON.stringify(body)}: ${(error as Error).message}`)
      }
    }
  })
})

test('sso connections: a domain written with URL parts (path, query, fragment, port, userinfo, escapes) is 400 validation and nothing is stored (§12)', async () => {
  const created = await create(oidcBody())
  const id = created.body.connection.id
  const bad = [
    'corp.example/x',
    'corp.example?q',
    'corp.example#f',
    'corp.example/',
    'corp.example\\x',
    'user@corp.example',
    'corp%2eexample.com',
    'corp.example.com:443',
    '[corp.example.com]',
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const d of bad) {
      const r = await create(oidcBody([d]))
      try {
        expectValidation(r)
      } catch (error) {
        assert.fail(`POST ${JSON.stringify(d)}: ${(error as Error).message}`)
      }
      const p = await call('PATCH', `${base()}/${id}`, { domains: [d] })
      try {
        expectValidation(p)
      } catch (error) {
        assert.fail(`PATCH ${JSON.stringify(d)}: ${(error as Error).message}`)
      }
    }
  })
  // The host those spellings hide was never taken: a well-formed connection may own it.
  const list = await call('GET', `${base()}?limit=100`)
  assert.ok(!list.body.items.some((c: { domains: string[] }) => c.domains.includes('corp.example')))
})

test("sso connections: another tenant's connection is 404, a Member is 403, and nothing changes", async () => {
  const created = await create(oidcBody())
  const id = created.body.connection.id
  const other = await createTenant(server)
  const theirs = other.admin.accessToken
  const member = await memberToken(server, t.slug)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    for (const [method, path, body] of [
      ['GET', `${base(other.slug)}/${id}`, undefined],
      ['PATCH', `${base(other.slug)}/${id}`, { enabled: false }],
      ['DELETE', `${base(other.slug)}/${id}`, undefined],
      ['GET', `${base(other.slug)}/not-a-uuid`, undefined],
    ] as const) {
      expectError(await call(method, path, body, theirs), 404, 'not_found')
    }
    const listed = await call('GET', base(other.slug), undefined, theirs)
    assert.deepEqual(listed.body.items, [])
    expectError(await call('GET', base(), undefined, member), 403, 'admin_required')
    expectError(await create(oidcBody(), member), 403, 'admin_required')
    expectError(await call('DELETE', `${base()}/${id}`, undefined, member), 403, 'admin_required')
  })
})

test('npm run rotate-keys re-seals an OIDC connection secret under the first ENCRYPTION_KEYS entry; it stays the same', async () => {
  const tenant = await createTenant(server)
  const made = await call('POST', base(tenant.slug), oidcBody(), tenant.admin.accessToken)
  const id = made.body.connection.id
  const [v1] = server.deps.config.encryptionKeys
  const rotated = new FieldCipher([{ version: 'v2', key: Buffer.alloc(32, 42) }, v1])
  const column = ssoSecretColumn.rotation(server.deps.db, rotated)
  const start = {
    tenantId: tenant.tenantId,
    id: '00000000-0000-0000-0000-000000000000',
    sealed: '',
  }
  const report = await rotateColumn(rotated, {
    ...column,
    scan: async (after, limit) =>
      (await column.scan(after ?? start, limit)).filter((r) => r.tenantId === tenant.tenantId),
  })
  assert.equal(report.rotated, 1, JSON.stringify(report))
  const row = await storedRow(tenant.tenantId, id)
  assert.equal(rotated.versionOf(row.oidcClientSecretEnc ?? ''), 'v2')
  assert.equal(
    openSsoSecret(rotated, tenant.tenantId, id, row.oidcClientSecretEnc ?? ''),
    'sekrit-value',
  )
})

test('sso connections: an API key cannot create a connection nor change what one trusts (403 api_key_not_allowed, nothing changed); it may rename, disable, enforce and delete', async () => {
  const { plaintext: key } = await createKey(server, t.slug, admin)
  // The attack it stops: a key aims a connection at an IdP it controls for the Admin's
  // domain, and the first SSO sign-in links the Admin (F1's rule, issue 36).
  const adminDomain = t.adminEmail.split('@')[1]
  await unchanged(server, t.tenantId, async () => {
    for (const body of [
      oidcBody(),
      samlBody(),
      { ...oidcBody([`x${domain()}`]), defaultRole: 'Admin' },
    ]) {
      expectError(await create(body, key), 403, 'api_key_not_allowed')
    }
  })
  const made = await create(oidcBody([`k${domain()}`]))
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const path = `${base()}/${made.body.connection.id}`
  const before = await storedRow(t.tenantId, made.body.connection.id)
  await unchanged(server, t.tenantId, async () => {
    for (const patch of [
      { domains: [adminDomain] },
      { oidc: { issuer: 'https://attacker.example.net' } },
      { oidc: { clientSecret: 'theirs' } },
      { defaultRole: 'Admin' },
      { mfaSatisfied: true },
      { jitProvisioning: false },
      { name: 'Renamed', domains: [adminDomain] },
    ]) {
      expectError(await call('PATCH', path, patch, key), 403, 'api_key_not_allowed')
    }
  })
  assert.deepEqual(await storedRow(t.tenantId, made.body.connection.id), before)

  const renamed = await call(
    'PATCH',
    path,
    { name: 'Okta (renamed)', enabled: false, enforce: true },
    key,
  )
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body))
  assert.equal(renamed.body.connection.name, 'Okta (renamed)')
  assert.equal(renamed.body.connection.enabled, false)
  assert.equal((await call('DELETE', path, undefined, key)).status, 200)
  assert.equal((await call('GET', path)).status, 404)
})
