// The SAML IdP over HTTP (CONTRACT §22): saml applications on the applications API (fields,
// SP metadata, every bad input 400 with nothing changed, a taken entity id 409), the IdP
// metadata, SP-initiated sign-ins by both bindings (the response checked by the service's
// own SAML SP validation: signature, Audience, Recipient, Destination, InResponseTo, five
// minutes), the ACS an AssertionConsumerServiceIndex names (the index in the SP's
// metadata), the IdP-initiated start, and each refusal: an unregistered ACS (an error page,
// never a post), an unsigned or badly signed request when the SP has certificates, a
// Destination that is not this IdP (or none on a signed request), an IssueInstant outside five minutes either side, a
// request ID used before (a replay, a burst of one), another tenant's application, a
// suspended user. The browser round trips with real SPs are test/web/saml-idp-browser.test.ts
// (SimpleSAMLphp) and test/web/saml-idp-mellon-browser.test.ts (mod_auth_mellon).
import assert from 'node:assert/strict'
import { createSign, X509Certificate } from 'node:crypto'
import { before, describe, test } from 'node:test'
import { deflateRawSync } from 'node:zlib'
import { DOMParser } from '@xmldom/xmldom'
import { SignedXml } from 'xml-crypto'
import { auditRows, setUser, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { idpKey } from '../../../test/fixtures/saml-responses.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { hiddenValue, PageClient } from '../../../test/web/page-client.ts'
import { validateSamlResponse } from '../federation/saml.ts'

let server: TestServer
let t: TenantFixture
let other: TenantFixture
const spKey = idpKey('Test SP')
const SP = 'https://wiki.example.test/saml/metadata'
const ACS = 'https://wiki.example.test/saml/acs'
const SIGNED_SP = 'https://signed.example.test/sp'
const SIGNED_ACS = 'https://signed.example.test/acs'
let app: { id: string }

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  other = await createTenant(server)
  app = (
    await createApp({
      name: 'Wiki',
      type: 'saml',
      entityId: SP,
      acsUrls: [ACS, 'https://wiki.example.test/saml/acs2'],
      attributes: [
        { name: 'mail', from: 'email' },
        { name: 'roles', from: 'roles' },
      ],
    })
  ).body.application
  const signed = await createApp({
    name: 'Signed',
    type: 'saml',
    entityId: SIGNED_SP,
    acsUrls: [SIGNED_ACS],
    spCertificates: [spKey.certificate],
    signResponse: true,
  })
  assert.equal(signed.status, 200, JSON.stringify(signed.body))
})

function createApp(body: unknown, token = t.admin.accessToken, slug = t.slug) {
  return server.request('POST', `/v1/${slug}/applications`, body, { token })
}

const publicUrl = () => server.deps.config.publicUrl
const idpEntityId = (slug = t.slug) => `${publicUrl()}/saml/${slug}/metadata`

let counter = 0
/**
 * An AuthnRequest of `issuer`, issued now by the service's clock and addressed to this
 * tenant's SSO URL; `attrs` adds or replaces attributes (null leaves one out).
 */
function authnRequest(
  issuer: string,
  attrs: Record<string, string | null> = {},
): { id: string; xml: string } {
  const id = attrs.ID ?? `_req${Date.now()}${counter++}`
  const all: Record<string, string | null> = {
    ID: id,
    Version: '2.0',
    IssueInstant: server.clock.now().toISOString(),
    Destination: `${publicUrl()}/saml/${t.slug}/sso`,
    ...attrs,
  }
  const list = Object.entries(all)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => ` ${k}="${v}"`)
    .join('')
  const xml = `<samlp:AuthnRequest xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion"${list}><saml:Issuer>${issuer}</saml:Issuer></samlp:AuthnRequest>`
  return { id, xml }
}

/** The HTTP-Redirect query (SAML Bindings §3.4.4.1), signed with `key` when given. */
function redirectQuery(xml: string, relayState?: string, key?: string): string {
  const parts = [
    `SAMLRequest=${encodeURIComponent(deflateRawSync(Buffer.from(xml)).toString('base64'))}`,
  ]
  if (relayState !== undefined) parts.push(`RelayState=${encodeURIComponent(relayState)}`)
  if (key) {
    parts.push(`SigAlg=${encodeURIComponent('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256')}`)
    const signer = createSign('RSA-SHA256')
    signer.update(parts.join('&'))
    parts.push(`Signature=${encodeURIComponent(signer.sign(key, 'base64'))}`)
  }
  return parts.join('&')
}

/** An enveloped signature of the request (SAML Core §5.4), as an SP's library makes it. */
function signedPost(xml: string, key: string, cert: string): string {
  const signer = new SignedXml({
    privateKey: key,
    publicCert: cert,
    signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
  })
  signer.addReference({
    xpath: "/*[local-name(.)='AuthnRequest']",
    transforms: [
      'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
      'http://www.w3.org/2001/10/xml-exc-c14n#',
    ],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  })
  signer.computeSignature(xml, {
    location: {
      reference: "/*[local-name(.)='AuthnRequest']/*[local-name(.)='Issuer']",
      action: 'after',
    },
  })
  return signer.getSignedXml()
}

async function idpCertificates(slug = t.slug): Promise<string[]> {
  const res = await fetch(`${server.url}/saml/${slug}/metadata`)
  const doc = new DOMParser().parseFromString(await res.text(), 'application/xml')
  const certs = doc.getElementsByTagNameNS('http://www.w3.org/2000/09/xmldsig#', 'X509Certificate')
  return Array.from({ length: certs.length }, (_, i) => {
    const body = certs.item(i)?.textContent ?? ''
    return `-----BEGIN CERTIFICATE-----\n${body.match(/.{1,64}/g)?.join('\n')}\n-----END CERTIFICATE-----`
  })
}

/** A signed-in browser of the tenant (the hosted sign-in page). */
async function signedInBrowser(who?: { email: string; password: string }) {
  const user = who ?? (await signup(server, t.slug))
  // An address is asserted only once verified (the next test shows the refusal).
  if (!who) await setUser(server, t.tenantId, user.user.id, { emailVerified: true })
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  const page = await browser.post(`/t/${t.slug}/sign-in`, {
    email: user.email,
    password: user.password,
  })
  assert.match(page.url, /\/account$/)
  return { browser, user }
}

/** The auto-posting form of the SAML page: its action, SAMLResponse and RelayState. */
function postedForm(html: string) {
  const action = /<form method="post" action="([^"]+)" data-autosubmit>/.exec(html)?.[1]
  return {
    action: action?.replace(/&amp;/g, '&'),
    samlResponse: hiddenValue(html, 'SAMLResponse'),
    relayState: hiddenValue(html, 'RelayState'),
  }
}

describe('saml applications on the applications API', () => {
  test('a saml application from fields: its record, no secret, no OAuth client', async () => {
    const res = await createApp({
      name: 'Fields',
      type: 'saml',
      entityId: 'https://fields.example.test/sp',
      acsUrls: ['https://fields.example.test/acs'],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.clientSecret, undefined)
    assert.deepEqual(res.body.application.saml, {
      entityId: 'https://fields.example.test/sp',
      acsUrls: ['https://fields.example.test/acs'],
      nameIdFormat: 'emailAddress',
      attributes: [],
      spCertificates: [],
      signResponse: false,
      acsIndexes: [],
    })
    assert.equal(res.body.application.type, 'saml')
    // The OpenID provider does not know it: its client id is no client.
    const token = await fetch(`${server.url}/oidc/${t.slug}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${res.body.application.clientId}`,
    })
    assert.equal(token.status, 401)
    // An OIDC application's record has saml null.
    const web = await createApp({
      name: 'Web',
      type: 'web',
      redirectUris: ['https://w.example/cb'],
    })
    assert.equal(web.body.application.saml, null)
  })

  test('a saml application from SP metadata: entity id, HTTP-POST ACS, certificate, NameID format', async () => {
    const body = spKey.certificate.replace(/-----[^-]+-----|\s/g, '')
    const xml = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="https://meta.example.test/sp"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:KeyDescriptor use="signing"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>${body}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor><md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://meta.example.test/art" index="0"/><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://meta.example.test/acs" index="1"/></md:SPSSODescriptor></md:EntityDescriptor>`
    const res = await createApp({ name: 'Meta', type: 'saml', spMetadataXml: xml })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const { saml } = res.body.application
    assert.equal(saml.entityId, 'https://meta.example.test/sp')
    assert.deepEqual(saml.acsUrls, ['https://meta.example.test/acs'])
    assert.equal(saml.nameIdFormat, 'persistent')
    assert.deepEqual(saml.acsIndexes, [{ index: 1, url: 'https://meta.example.test/acs' }])
    assert.equal(
      new X509Certificate(saml.spCertificates[0]).fingerprint256,
      new X509Certificate(spKey.certificate).fingerprint256,
    )
  })

  test('bad input is 400 validation and changes nothing', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'X', type: 'saml', acsUrls: ['https://x.example/acs'] }, 'body.entityId'],
      [{ name: 'X', type: 'saml', entityId: 'https://x.example/sp' }, 'body.acsUrls'],
      [
        { name: 'X', type: 'saml', entityId: 'x', acsUrls: ['http://x.example/acs'] },
        'body.acsUrls.0',
      ],
      [
        { name: 'X', type: 'saml', entityId: 'x', acsUrls: ['javascript:alert(1)'] },
        'body.acsUrls.0',
      ],
      [{ name: 'X', type: 'saml', entityId: 'x', acsUrls: [] }, 'body.acsUrls'],
      [
        {
          name: 'X',
          type: 'saml',
          entityId: 'x',
          acsUrls: ['https://x.example/a'],
          spCertificates: ['not a pem'],
        },
        'body.spCertificates.0',
      ],
      [
        {
          name: 'X',
          type: 'saml',
          entityId: 'x',
          acsUrls: ['https://x.example/a'],
          nameIdFormat: 'transient',
        },
        'body.nameIdFormat',
      ],
      [
        {
          name: 'X',
          type: 'saml',
          entityId: 'x',
          acsUrls: ['https://x.example/a'],
          attributes: [{ name: 'a', from: 'password' }],
        },
        'body.attributes.0.from',
      ],
      [
        {
          name: 'X',
          type: 'saml',
          entityId: 'x',
          acsUrls: ['https://x.example/a'],
          attributes: [
            { name: 'a', from: 'email' },
            { name: 'a', from: 'id' },
          ],
        },
        'body.attributes.1.name',
      ],
      [
        {
          name: 'X',
          type: 'saml',
          entityId: 'x',
          acsUrls: ['https://x.example/a'],
          redirectUris: ['https://x.example/cb'],
        },
        'body.redirectUris',
      ],
      [
        { name: 'X', type: 'web', redirectUris: ['https://x.example/cb'], entityId: 'x' },
        'body.entityId',
      ],
      [{ name: 'X', type: 'saml', spMetadataXml: '<not-xml' }, 'body.spMetadataXml'],
      [{ name: 'X', type: 'saml', spMetadataXml: '<!DOCTYPE x><x/>' }, 'body.spMetadataXml'],
    ]
    for (const [body, path] of cases) {
      const res = await unchanged(server, t.tenantId, () => createApp(body))
      expectValidation(res, path)
    }
    const patch = await unchanged(server, t.tenantId, () =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/applications/${app.id}`,
        { acsUrls: ['ftp://x.example/a'] },
        { token: t.admin.accessToken },
      ),
    )
    expectValidation(patch, 'body.acsUrls.0')
  })

  test('an entity id is one application of the tenant: 409, another tenant may use it', async () => {
    const res = await unchanged(server, t.tenantId, () =>
      createApp({ name: 'Again', type: 'saml', entityId: SP, acsUrls: [ACS] }),
    )
    expectError(res, 409, 'entity_id_taken')
    const elsewhere = await createApp(
      { name: 'Theirs', type: 'saml', entityId: SP, acsUrls: ['https://theirs.example.test/acs'] },
      other.admin.accessToken,
      other.slug,
    )
    assert.equal(elsewhere.status, 200)
  })

  test('PATCH changes the SP settings and keeps the rest', async () => {
    const made = await createApp({
      name: 'P',
      type: 'saml',
      entityId: 'https://p.example/sp',
      acsUrls: ['https://p.example/acs'],
    })
    const res = await server.request(
      'PATCH',
      `/v1/${t.slug}/applications/${made.body.application.id}`,
      { signResponse: true, nameIdFormat: 'unspecified' },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.application.saml.signResponse, true)
    assert.equal(res.body.application.saml.nameIdFormat, 'unspecified')
    assert.equal(res.body.application.saml.entityId, 'https://p.example/sp')
  })
})

describe('the IdP', () => {
  test('metadata: the entity id, both SSO bindings, the signing certificate', async () => {
    const res = await fetch(`${server.url}/saml/${t.slug}/metadata`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /samlmetadata\+xml/)
    const xml = await res.text()
    assert.match(xml, new RegExp(`entityID="${idpEntityId().replace(/[/.]/g, '\\$&')}"`))
    assert.match(xml, /HTTP-Redirect" Location="[^"]+\/saml\/[^/]+\/sso"/)
    assert.match(xml, /HTTP-POST" Location="[^"]+\/saml\/[^/]+\/sso"/)
    const [cert] = await idpCertificates()
    assert.ok(new X509Certificate(cert))
    // The same bytes on every request (a deterministic certificate), another for another tenant.
    assert.deepEqual(await idpCertificates(), [cert])
    assert.notEqual((await idpCertificates(other.slug))[0], cert)
  })

  test('SP-initiated by HTTP-Redirect: the hosted session signs in; the response is signed, for this SP, this ACS and this request', async () => {
    const { browser, user } = await signedInBrowser()
    const { id, xml } = authnRequest(SP, {
      AssertionConsumerServiceURL: 'https://wiki.example.test/saml/acs2',
    })
    const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml, 'relay-1')}`)
    assert.equal(page.status, 200, page.html)
    assert.match(
      page.headers.get('content-security-policy') ?? '',
      /form-action 'self' https:\/\/wiki\.example\.test;/,
    )
    const form = postedForm(page.html)
    assert.equal(form.action, 'https://wiki.example.test/saml/acs2')
    assert.equal(form.relayState, 'relay-1')
    const now = new Date()
    const idp = {
      idpEntityId: idpEntityId(),
      idpSsoUrl: '',
      idpCertificates: await idpCertificates(),
    }
    const sp = { entityId: SP, acsUrl: 'https://wiki.example.test/saml/acs2' }
    const assertion = await validateSamlResponse(idp, sp, form.samlResponse ?? '', {
      requestId: id,
      now,
    })
    assert.equal(assertion.nameId, user.email)
    assert.deepEqual(assertion.attributes.mail, [user.email])
    assert.deepEqual(assertion.attributes.roles, ['Member'])
    assert.ok(assertion.notOnOrAfter.getTime() <= now.getTime() + 5 * 60_000 + 1000, 'five minutes')
    // Another request's id, another SP: refused by the same validation.
    await assert.rejects(
      validateSamlResponse(idp, sp, form.samlResponse ?? '', { requestId: '_other', now }),
    )
    await assert.rejects(
      validateSamlResponse(idp, { ...sp, entityId: SIGNED_SP }, form.samlResponse ?? '', {
        requestId: id,
        now,
      }),
    )
    // The pending request is spent: the same page again is stale.
    const again = await browser.get(page.url.replace(server.deps.config.publicUrl, ''))
    assert.equal(again.status, 400)
    assert.equal(postedForm(again.html).samlResponse, undefined)
  })

  test('a browser that is not signed in goes to the sign-in page and comes back; UserLogin names the samlApp', async () => {
    const user = await signup(server, t.slug)
    await setUser(server, t.tenantId, user.user.id, { emailVerified: true })
    const browser = new PageClient(server, randomIp())
    const { id, xml } = authnRequest(SP)
    const signIn = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
    assert.match(signIn.url, new RegExp(`/t/${t.slug}/sign-in$`))
    const done = await browser.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: user.password,
    })
    const back = /href="(\/t\/[^"]+\/saml\/[^"]+)"/.exec(done.html)?.[1]
    assert.ok(back, done.html)
    const page = await browser.get(back)
    const form = postedForm(page.html)
    assert.equal(form.action, ACS)
    const idp = {
      idpEntityId: idpEntityId(),
      idpSsoUrl: '',
      idpCertificates: await idpCertificates(),
    }
    await validateSamlResponse(idp, { entityId: SP, acsUrl: ACS }, form.samlResponse ?? '', {
      requestId: id,
      now: new Date(),
    })
    const rows = (await auditRows(server, t.tenantId, 'UserLogin')).filter(
      (r) => r.userId === user.user.id,
    )
    assert.equal(rows.length, 1)
    assert.equal((rows[0].metadata as Record<string, unknown>).samlApp, app.id)
  })

  test('SP-initiated by HTTP-POST with a signed request; the response is signed too (signResponse)', async () => {
    const { browser } = await signedInBrowser()
    const { xml } = authnRequest(SIGNED_SP)
    const signed = signedPost(xml, spKey.privateKey, spKey.certificate)
    const res = await browser.once('POST', `/saml/${t.slug}/sso`, {
      SAMLRequest: Buffer.from(signed).toString('base64'),
    })
    assert.equal(res.status, 303)
    const page = await browser.get(res.headers.get('location') ?? '')
    const form = postedForm(page.html)
    assert.equal(form.action, SIGNED_ACS)
    const decoded = Buffer.from(form.samlResponse ?? '', 'base64').toString()
    assert.equal(decoded.match(/<ds:Signature[ >]/g)?.length, 2, 'response and assertion signed')
  })

  test('AssertionConsumerServiceIndex is the index in the SP’s metadata, not a position in acsUrls', async () => {
    const acs = (n: number, binding = 'HTTP-POST', extra = '') =>
      `<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:${binding}" Location="https://indexed.example.test/acs${n}" index="${n}"${extra}/>`
    const xml = `<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://indexed.example.test/sp"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">${acs(0, 'HTTP-Artifact')}${acs(1, 'HTTP-POST', ' isDefault="true"')}${acs(2, 'HTTP-Artifact')}${acs(3)}${acs(5)}<md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Artifact" Location="https://indexed.example.test/art5" index="5"/></md:SPSSODescriptor></md:EntityDescriptor>`
    const made = await createApp({ name: 'Indexed', type: 'saml', spMetadataXml: xml })
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const { id: appId, saml } = made.body.application
    const url = (n: number) => `https://indexed.example.test/acs${n}`
    assert.deepEqual(saml.acsUrls, [url(1), url(3), url(5)], 'the default first')
    // Index 5 is an HTTP-POST and an HTTP-Artifact endpoint's at once: it names neither.
    assert.deepEqual(saml.acsIndexes, [
      { index: 1, url: url(1) },
      { index: 3, url: url(3) },
    ])
    const { browser } = await signedInBrowser()
    const sent = async (index: string) => {
      const { xml } = authnRequest('https://indexed.example.test/sp', {
        AssertionConsumerServiceIndex: index,
      })
      return browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
    }
    for (const n of [3, 1]) {
      const page = await sent(String(n))
      assert.equal(page.status, 200, page.html)
      assert.equal(postedForm(page.html).action, url(n), `index ${n}`)
    }
    // Another binding's index, a position in acsUrls that is no index, a shared index.
    for (const index of ['0', '2', '5', '4']) {
      const page = await sent(index)
      assert.equal(page.status, 403, `index ${index}`)
      assert.match(page.html, /Error code: saml_acs_unregistered/)
      assert.doesNotMatch(page.html, /SAMLResponse/)
    }
    // An ACS the admin takes off the list takes its index with it.
    const patched = await server.request(
      'PATCH',
      `/v1/${t.slug}/applications/${appId}`,
      { acsUrls: [url(1), url(5)] },
      { token: t.admin.accessToken },
    )
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    assert.deepEqual(patched.body.application.saml.acsIndexes, [{ index: 1, url: url(1) }])
    assert.equal((await sent('3')).status, 403)
    assert.equal(postedForm((await sent('1')).html).action, url(1))
  })

  test('an application made from fields takes AssertionConsumerServiceIndex as the position in acsUrls', async () => {
    const { browser } = await signedInBrowser()
    const { xml } = authnRequest(SP, { AssertionConsumerServiceIndex: '1' })
    const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
    assert.equal(page.status, 200, page.html)
    assert.equal(postedForm(page.html).action, 'https://wiki.example.test/saml/acs2')
  })

  test('IdP-initiated: the first ACS, no InResponseTo', async () => {
    const { browser } = await signedInBrowser()
    const page = await browser.get(`/v1/${t.slug}/saml-apps/${app.id}/start?RelayState=home`)
    const form = postedForm(page.html)
    assert.equal(form.action, ACS)
    assert.equal(form.relayState, 'home')
    const decoded = Buffer.from(form.samlResponse ?? '', 'base64').toString()
    assert.doesNotMatch(decoded, /InResponseTo/)
    assert.match(decoded, new RegExp(`<saml:Audience>${SP}</saml:Audience>`))
  })
})

describe('refusals: an error page, never a post to the SP, nothing changed', () => {
  const refused = async (
    path: string,
    status: number,
    reason: string,
    init?: { body: Record<string, string> },
  ) => {
    const { browser } = await signedInBrowser()
    const res = await unchanged(server, [t.tenantId, other.tenantId], () =>
      init ? browser.once('POST', path, init.body) : browser.once('GET', path),
    )
    assert.equal(res.status, status)
    const html = await res.text()
    assert.match(html, new RegExp(`Error code: ${reason}`))
    assert.doesNotMatch(html, /SAMLResponse/)
    assert.ok(!res.headers.getSetCookie().some((c) => c.startsWith('ta_saml_idp')), 'nothing kept')
  }

  test('an ACS the application has not registered', async () => {
    const { xml } = authnRequest(SP, { AssertionConsumerServiceURL: 'https://evil.example/acs' })
    await refused(`/saml/${t.slug}/sso?${redirectQuery(xml)}`, 403, 'saml_acs_unregistered')
    const byIndex = authnRequest(SP, { AssertionConsumerServiceIndex: '7' })
    await refused(`/saml/${t.slug}/sso?${redirectQuery(byIndex.xml)}`, 403, 'saml_acs_unregistered')
  })

  test('a Destination other than this IdP’s SSO URL is discarded (SAML Core §3.2.1), by either binding, signed or not', async () => {
    const elsewhere = authnRequest(SP, { Destination: 'https://idp.elsewhere.example/sso' })
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(elsewhere.xml)}`,
      403,
      'saml_wrong_destination',
    )
    // Another tenant's SSO URL: a request made for that tenant's IdP, sent to this one.
    const theirs = authnRequest(SP, { Destination: `${publicUrl()}/saml/${other.slug}/sso` })
    await refused(`/saml/${t.slug}/sso?${redirectQuery(theirs.xml)}`, 403, 'saml_wrong_destination')
    // The URL with something more (a query) is another URL.
    const query = authnRequest(SP, { Destination: `${publicUrl()}/saml/${t.slug}/sso?x=1` })
    await refused(`/saml/${t.slug}/sso?${redirectQuery(query.xml)}`, 403, 'saml_wrong_destination')
    // Signed by the SP, so the signature holds and the Destination is what refuses it.
    const signed = authnRequest(SIGNED_SP, { Destination: 'https://idp.elsewhere.example/sso' })
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(signed.xml, 'r', spKey.privateKey)}`,
      403,
      'saml_wrong_destination',
    )
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_wrong_destination', {
      body: {
        SAMLRequest: Buffer.from(
          signedPost(signed.xml, spKey.privateKey, spKey.certificate),
        ).toString('base64'),
      },
    })
  })

  test('an unsigned request without a Destination is taken, by either binding (SAML Core §3.2.1: it is optional)', async () => {
    const { browser } = await signedInBrowser()
    const { xml } = authnRequest(SP, { Destination: null })
    assert.doesNotMatch(xml, /Destination/)
    const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
    assert.equal(page.status, 200, page.html)
    assert.ok(postedForm(page.html).samlResponse)
    const posted = authnRequest(SP, { Destination: null })
    const form = await browser.post(`/saml/${t.slug}/sso`, {
      SAMLRequest: Buffer.from(posted.xml).toString('base64'),
    })
    assert.equal(form.status, 200, form.html)
    assert.ok(postedForm(form.html).samlResponse)
  })

  test('rule: a signed request must name its Destination (SAML Bindings §3.4.5.2, §3.5.5.2): without one, saml_wrong_destination by either binding', async () => {
    // Signed by the SP whose certificate the application holds: the signature is good.
    const redirect = authnRequest(SIGNED_SP, { Destination: null })
    assert.doesNotMatch(redirect.xml, /Destination/)
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(redirect.xml, 'r', spKey.privateKey)}`,
      403,
      'saml_wrong_destination',
    )
    const posted = authnRequest(SIGNED_SP, { Destination: null })
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_wrong_destination', {
      body: {
        SAMLRequest: Buffer.from(
          signedPost(posted.xml, spKey.privateKey, spKey.certificate),
        ).toString('base64'),
      },
    })
    // Signed by an SP whose application has no certificates: the signature is not checked,
    // yet the request is a signed one, and Bindings asks the same of it.
    const unchecked = authnRequest(SP, { Destination: null })
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(unchecked.xml, undefined, spKey.privateKey)}`,
      403,
      'saml_wrong_destination',
    )
    const uncheckedPost = authnRequest(SP, { Destination: null })
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_wrong_destination', {
      body: {
        SAMLRequest: Buffer.from(
          signedPost(uncheckedPost.xml, spKey.privateKey, spKey.certificate),
        ).toString('base64'),
      },
    })
    // The refusal spent nothing: the same request with its Destination is taken.
    const { browser } = await signedInBrowser()
    const named = authnRequest(SIGNED_SP, { ID: redirect.id })
    const page = await browser.get(
      `/saml/${t.slug}/sso?${redirectQuery(named.xml, 'r', spKey.privateKey)}`,
    )
    assert.equal(page.status, 200, page.html)
    assert.ok(postedForm(page.html).samlResponse)
  })

  test('an IssueInstant more than five minutes old is refused: saml_request_expired', async () => {
    const issued = (ms: number) => new Date(server.clock.now().getTime() + ms).toISOString()
    const old = authnRequest(SP, { IssueInstant: issued(-5 * 60_000 - 1000) })
    await refused(`/saml/${t.slug}/sso?${redirectQuery(old.xml)}`, 403, 'saml_request_expired')
    const signed = authnRequest(SIGNED_SP, { IssueInstant: issued(-60 * 60_000) })
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_request_expired', {
      body: {
        SAMLRequest: Buffer.from(
          signedPost(signed.xml, spKey.privateKey, spKey.certificate),
        ).toString('base64'),
      },
    })
    // By the service's clock: a request fresh when made is refused once it moved on.
    const fresh = authnRequest(SP)
    server.clock.advance(5 * 60 + 1)
    try {
      await refused(`/saml/${t.slug}/sso?${redirectQuery(fresh.xml)}`, 403, 'saml_request_expired')
    } finally {
      server.clock.advance(-(5 * 60 + 1))
    }
  })

  test('an IssueInstant more than five minutes ahead is refused: saml_request_not_yet_valid', async () => {
    const issued = (ms: number) => new Date(server.clock.now().getTime() + ms).toISOString()
    const ahead = authnRequest(SP, { IssueInstant: issued(5 * 60_000 + 1000) })
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(ahead.xml)}`,
      403,
      'saml_request_not_yet_valid',
    )
    const signed = authnRequest(SIGNED_SP, { IssueInstant: issued(24 * 60 * 60_000) })
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(signed.xml, undefined, spKey.privateKey)}`,
      403,
      'saml_request_not_yet_valid',
    )
  })

  test('an IssueInstant within five minutes either side is taken (an SP clock a little off)', async () => {
    const { browser } = await signedInBrowser()
    for (const ms of [-4 * 60_000, 4 * 60_000]) {
      const issueInstant = new Date(server.clock.now().getTime() + ms).toISOString()
      const { xml } = authnRequest(SP, { IssueInstant: issueInstant })
      const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
      assert.equal(page.status, 200, page.html)
      assert.ok(postedForm(page.html).samlResponse)
    }
  })

  test('a request ID is taken once per application: a replay, by either binding, is saml_request_replayed', async () => {
    const { browser } = await signedInBrowser()
    // A signed request, copied (from a log, a proxy, the browser's history) and sent again.
    const { id, xml } = authnRequest(SIGNED_SP)
    const path = `/saml/${t.slug}/sso?${redirectQuery(xml, 'r', spKey.privateKey)}`
    assert.equal((await browser.once('GET', path)).status, 303)
    await refused(path, 403, 'saml_request_replayed')
    const again = await unchanged(server, t.tenantId, () => browser.once('GET', path))
    assert.equal(again.status, 403, 'the browser that sent it first is refused too')
    // The same ID in a request posted and signed anew is still that request.
    const posted = authnRequest(SIGNED_SP, { ID: id })
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_request_replayed', {
      body: {
        SAMLRequest: Buffer.from(
          signedPost(posted.xml, spKey.privateKey, spKey.certificate),
        ).toString('base64'),
      },
    })
    // Unsigned, by POST first and then by Redirect.
    const plain = authnRequest(SP)
    const body = { SAMLRequest: Buffer.from(plain.xml).toString('base64') }
    assert.equal((await browser.once('POST', `/saml/${t.slug}/sso`, body)).status, 303)
    await refused(`/saml/${t.slug}/sso?${redirectQuery(plain.xml)}`, 403, 'saml_request_replayed')
  })

  test('a request ID spent by one application is another application’s to use', async () => {
    const second = await createApp({
      name: 'Second',
      type: 'saml',
      entityId: 'https://second.example.test/sp',
      acsUrls: ['https://second.example.test/acs'],
    })
    assert.equal(second.status, 200, JSON.stringify(second.body))
    const { browser } = await signedInBrowser()
    const { id, xml } = authnRequest(SP)
    assert.equal((await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)).status, 200)
    const theirs = authnRequest('https://second.example.test/sp', { ID: id })
    const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(theirs.xml)}`)
    assert.equal(page.status, 200, page.html)
    assert.equal(postedForm(page.html).action, 'https://second.example.test/acs')
  })

  test('a refused request spends nothing: its ID is still the genuine request’s', async () => {
    const { browser } = await signedInBrowser()
    const { xml } = authnRequest(SIGNED_SP)
    const forged = redirectQuery(xml, undefined, idpKey('Someone else').privateKey)
    await refused(`/saml/${t.slug}/sso?${forged}`, 403, 'saml_bad_signature')
    const unsigned = redirectQuery(xml)
    await refused(`/saml/${t.slug}/sso?${unsigned}`, 403, 'saml_request_unsigned')
    const genuine = await browser.get(
      `/saml/${t.slug}/sso?${redirectQuery(xml, undefined, spKey.privateKey)}`,
    )
    assert.equal(genuine.status, 200, genuine.html)
    assert.ok(postedForm(genuine.html).samlResponse)
  })

  test('saml replay race: of a burst of one request, exactly one is taken', async () => {
    const { browser } = await signedInBrowser()
    const { xml } = authnRequest(SIGNED_SP)
    const path = `/saml/${t.slug}/sso?${redirectQuery(xml, undefined, spKey.privateKey)}`
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => browser.once('GET', path).then((r) => r.status)),
    )
    assert.deepEqual(
      answers.sort(),
      [303, 403, 403, 403, 403, 403, 403, 403],
      'one sign-in begun, seven refused',
    )
  })

  test('an unsigned request when the SP has certificates, by either binding', async () => {
    const { xml } = authnRequest(SIGNED_SP)
    await refused(`/saml/${t.slug}/sso?${redirectQuery(xml)}`, 403, 'saml_request_unsigned')
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_request_unsigned', {
      body: { SAMLRequest: Buffer.from(xml).toString('base64') },
    })
  })

  test('a bad signature: another key, a changed request, a changed RelayState', async () => {
    const otherKey = idpKey('Someone else')
    const { xml } = authnRequest(SIGNED_SP)
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(xml, undefined, otherKey.privateKey)}`,
      403,
      'saml_bad_signature',
    )
    const query = redirectQuery(xml, 'a', spKey.privateKey)
    await refused(
      `/saml/${t.slug}/sso?${query.replace('RelayState=a', 'RelayState=b')}`,
      403,
      'saml_bad_signature',
    )
    const signed = signedPost(xml, spKey.privateKey, spKey.certificate)
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_bad_signature', {
      body: {
        SAMLRequest: Buffer.from(
          signed.replace('Version="2.0"', 'Version="2.0" ForceAuthn="false"'),
        ).toString('base64'),
      },
    })
    const byOther = signedPost(xml, otherKey.privateKey, otherKey.certificate)
    await refused(`/saml/${t.slug}/sso`, 403, 'saml_bad_signature', {
      body: { SAMLRequest: Buffer.from(byOther).toString('base64') },
    })
  })

  test("another tenant's application: unknown at this tenant's IdP", async () => {
    const { xml } = authnRequest(SIGNED_SP)
    await refused(
      `/saml/${other.slug}/sso?${redirectQuery(xml, undefined, spKey.privateKey)}`,
      403,
      'saml_unknown_sp',
    )
    await refused(`/v1/${other.slug}/saml-apps/${app.id}/start`, 404, 'not_found')
  })

  test('malformed requests', async () => {
    await refused(`/saml/${t.slug}/sso?SAMLRequest=%25%25`, 400, 'saml_malformed')
    await refused(`/saml/${t.slug}/sso`, 400, 'saml_malformed')
    const doctype = Buffer.from('<!DOCTYPE x [<!ENTITY a "b">]><x/>')
    await refused(
      `/saml/${t.slug}/sso?SAMLRequest=${encodeURIComponent(deflateRawSync(doctype).toString('base64'))}`,
      400,
      'saml_malformed',
    )
    const { xml } = authnRequest(SP)
    await refused(
      `/saml/${t.slug}/sso?${redirectQuery(xml, 'x'.repeat(513))}`,
      400,
      'saml_malformed',
    )
    // IssueInstant is required (SAML Core §3.2.1), a UTC xs:dateTime.
    for (const IssueInstant of [null, 'yesterday', '2026-01-01T10:00:00+02:00', '']) {
      const bad = authnRequest(SP, { IssueInstant })
      await refused(`/saml/${t.slug}/sso?${redirectQuery(bad.xml)}`, 400, 'saml_malformed')
    }
  })

  test('a suspended user gets no response: the page sends the browser to sign in', async () => {
    const { browser, user } = await signedInBrowser()
    await setUser(server, t.tenantId, user.user.id, { status: 'Suspended' })
    const { xml } = authnRequest(SP)
    const page = await unchanged(server, t.tenantId, () =>
      browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`),
    )
    assert.match(page.url, new RegExp(`/t/${t.slug}/sign-in$`))
    assert.equal(postedForm(page.html).samlResponse, undefined)
  })

  test('an unverified address is never asserted: a page asks to verify it, nothing is posted to the SP', async () => {
    const user = await signup(server, t.slug)
    const browser = new PageClient(server, randomIp())
    await browser.get(`/t/${t.slug}/sign-in`)
    const signedIn = await browser.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: user.password,
    })
    assert.match(signedIn.url, /\/account$/)
    const { xml } = authnRequest(SP)
    const page = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(xml)}`)
    assert.equal(page.status, 403, page.html)
    assert.equal(postedForm(page.html).samlResponse, undefined)
    assert.doesNotMatch(page.html, /SAMLResponse/)
    // Verified, the same browser gets its response.
    await setUser(server, t.tenantId, user.user.id, { emailVerified: true })
    const again = await browser.get(`/saml/${t.slug}/sso?${redirectQuery(authnRequest(SP).xml)}`)
    assert.equal(again.status, 200, again.html)
    assert.ok(postedForm(again.html).samlResponse)
  })

  test('a refusal is said in the page’s language (the catalogue, never English inline)', async () => {
    const res = await fetch(`${server.url}/saml/${t.slug}/sso`, {
      headers: { 'accept-language': 'de' },
    })
    assert.equal(res.status, 400)
    const html = await res.text()
    assert.match(html, /<html lang="de"/)
    assert.match(
      html,
      /Die Anwendung hat eine Anmeldeanfrage gesendet, die nicht gelesen werden konnte\./,
    )
    assert.doesNotMatch(html, /could not be read/)
  })
})
