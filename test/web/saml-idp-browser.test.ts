// The tenant as a SAML identity provider (CONTRACT §22) for a real SP nobody here wrote:
// SimpleSAMLphp configured as a service provider (test/fixtures/simplesamlphp-sp.ts), made a
// saml application of the tenant from its own SP metadata (so its AuthnRequests must be
// signed, and it signs them), trusting the IdP from the metadata the service publishes.
// Chromium starts at the SP, signs in on the hosted pages and lands on SimpleSAMLphp's
// attributes page; then the IdP-initiated start, with the hosted session reused.
//
// The service at http://localhost:<port> (test/fixtures/secure-origin.ts), the SP at
// http://localhost:<its port>: the ACS is http on loopback, which a saml application admits.
// Needs /usr/bin/chromium (skipped without it) and SimpleSAMLphp (fails without it).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { type TestContext, test } from 'node:test'
import { inflateRawSync } from 'node:zlib'
import { auditRows, setUser } from '../db.ts'
import { chromiumSkip, RESULT_SHOTS } from '../fixtures/browser.ts'
import { visit } from '../fixtures/console.ts'
import { signInOnSignInPage } from '../fixtures/oidc.ts'
import { launchChromium, startBehindLocalhost } from '../fixtures/secure-origin.ts'
import { startSimpleSamlSp } from '../fixtures/simplesamlphp-sp.ts'
import { createTenant, signup } from '../helpers.ts'

async function setup(t: TestContext) {
  const { server, publicUrl } = await startBehindLocalhost(t)
  const tenant = await createTenant(server, { name: 'Acme' })
  const metadata = await fetch(`${publicUrl}/saml/${tenant.slug}/metadata`)
  assert.equal(metadata.status, 200)
  const sp = await startSimpleSamlSp({
    idpMetadataXml: await metadata.text(),
    idpEntityId: `${publicUrl}/saml/${tenant.slug}/metadata`,
  })
  t.after(() => sp.stop())
  const created = await server.request(
    'POST',
    `/v1/${tenant.slug}/applications`,
    {
      name: 'Team wiki',
      type: 'saml',
      spMetadataXml: await sp.metadataXml(),
      attributes: [
        { name: 'mail', from: 'email' },
        { name: 'roles', from: 'roles' },
      ],
    },
    { token: tenant.admin.accessToken },
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const { application } = created.body
  assert.equal(application.saml.entityId, sp.entityId)
  assert.deepEqual(application.saml.acsUrls, [sp.acsUrl])
  assert.equal(application.saml.spCertificates.length, 1, 'the SP signs its requests')
  const user = await signup(server, tenant.slug, `ada-${Date.now()}@acme.example`)
  // The IdP asserts only a verified address (CONTRACT §22; samlidp.test.ts shows the refusal).
  await setUser(server, tenant.tenantId, user.user.id, { emailVerified: true })
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  return { server, publicUrl, tenant, sp, application, user, page }
}

/** SimpleSAMLphp's attributes page, with the person's NameID and attributes. */
async function attributesShown(s: Awaited<ReturnType<typeof setup>>) {
  await s.page.waitForURL((url) => url.href.startsWith(s.sp.loginUrl), { timeout: 20_000 })
  const text = (await s.page.locator('body').textContent()) ?? ''
  assert.match(text, new RegExp(s.user.email.replace(/[.]/g, '\\.')), s.sp.log())
  assert.match(text, /Member/, 'the roles attribute')
  return text
}

test('SAML IdP: SimpleSAMLphp as an SP signs a person in through the hosted pages (SP-initiated, signed Redirect request), then IdP-initiated', {
  skip: chromiumSkip,
}, async (t) => {
  const s = await setup(t)
  const seen: { method: string; url: string }[] = []
  s.page.on('request', (r) => seen.push({ method: r.method(), url: r.url() }))
  await s.page.goto(s.sp.loginUrl)
  // The SP's signed AuthnRequest reached the hosted sign-in page.
  await signInOnSignInPage(s.page, s.tenant.slug, s.user)
  await attributesShown(s)
  const sso = seen.find((r) => r.url.startsWith(`${s.publicUrl}/saml/${s.tenant.slug}/sso?`))
  assert.ok(sso, 'the SP sent its request by HTTP-Redirect')
  const query = new URL(sso.url).searchParams
  assert.ok(query.get('Signature') && query.get('SigAlg'), 'signed')
  // Signed, so it names its Destination (SAML Bindings §3.4.5.2), which the IdP requires.
  const request = inflateRawSync(Buffer.from(query.get('SAMLRequest') ?? '', 'base64')).toString()
  assert.ok(request.includes(`Destination="${s.publicUrl}/saml/${s.tenant.slug}/sso"`), request)
  assert.ok(
    seen.some((r) => r.method === 'POST' && r.url === s.sp.acsUrl),
    'the response was posted to the ACS',
  )
  const logins = await auditRows(s.server, s.tenant.tenantId, 'UserLogin')
  const forApp = logins.filter(
    (e) => (e.metadata as Record<string, unknown>).samlApp === s.application.id,
  )
  assert.equal(forApp.length, 1, JSON.stringify(logins.map((e) => e.metadata)))

  // IdP-initiated, in a fresh SP session: the hosted session is reused, no sign-in page.
  await s.page.context().clearCookies({ domain: 'localhost', path: '/simplesaml' })
  const cookies = await s.page.context().cookies()
  await s.page.context().clearCookies()
  await s.page
    .context()
    .addCookies(cookies.filter((c) => !c.name.toLowerCase().includes('simplesaml')))
  seen.length = 0
  await s.page.goto(`${s.publicUrl}/v1/${s.tenant.slug}/saml-apps/${s.application.id}/start`)
  await attributesShown(s)
  assert.ok(!seen.some((r) => r.url.includes('/sign-in')), 'the hosted session was reused')
  assert.ok(
    seen.some((r) => r.method === 'POST' && r.url === s.sp.acsUrl),
    'an unsolicited response was posted to the ACS',
  )
  assert.ok(
    !seen.some((r) => r.url.includes('/saml/') && r.url.includes('/sso?')),
    'no AuthnRequest',
  )

  // The hosted page that posts the response, held there (its post to the ACS answered 204 No Content) to be
  // photographed and checked (axe, never wider than a phone) at 1280 and 390 px.
  await s.page.route(s.sp.acsUrl, (route) => route.fulfill({ status: 204 }))
  await s.page.goto(`${s.publicUrl}/v1/${s.tenant.slug}/saml-apps/${s.application.id}/start`, {
    waitUntil: 'commit',
  })
  await s.page.getByRole('heading', { name: 'Signing you in to Team wiki' }).waitFor()
  await s.page.getByRole('button', { name: 'Continue' }).waitFor()
  mkdirSync(RESULT_SHOTS, { recursive: true })
  await visit(s.page, 'hosted-saml-response')
})
