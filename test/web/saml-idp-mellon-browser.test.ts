// The tenant as a SAML identity provider (CONTRACT §22) for a second real SP: Apache with
// mod_auth_mellon (test/fixtures/mellon.ts), made a saml application of the tenant from the
// SP metadata mellon publishes (so its AuthnRequests must be signed, and mellon signs them),
// trusting the IdP from the metadata the service publishes. Chromium opens mellon's
// protected page, signs in on the hosted pages and lands on it, and the page shows what
// mellon took from the assertion: the NameID, the IdP and the attributes (MELLON_*). Then
// the IdP-initiated start, with the hosted session reused, which mellon accepts as an
// unsolicited response. Mellon's own signed request, sent a second time, is refused.
//
// The service at http://localhost:<port> (test/fixtures/secure-origin.ts), mellon at
// http://localhost:<its port>: the ACS is http on loopback, which a saml application admits.
// Needs /usr/bin/chromium (skipped without it), apache2 and libapache2-mod-auth-mellon
// (fails without them).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { type TestContext, test } from 'node:test'
import { inflateRawSync } from 'node:zlib'
import type { Page } from 'playwright-core'
import { auditRows, setUser } from '../db.ts'
import { chromiumSkip, RESULT_SHOTS } from '../fixtures/browser.ts'
import { visit } from '../fixtures/console.ts'
import { type MellonSp, mellonEnvironment, startMellonSp } from '../fixtures/mellon.ts'
import { signInOnSignInPage } from '../fixtures/oidc.ts'
import { launchChromium, startBehindLocalhost } from '../fixtures/secure-origin.ts'
import { createTenant, signup } from '../helpers.ts'

/** What mellon's protected page shows once the browser is back on it. */
async function protectedPage(page: Page, sp: MellonSp): Promise<Record<string, string>> {
  await page.waitForURL(sp.protectedUrl, { timeout: 20_000 }).catch((error) => {
    throw new Error(`not back at mellon but at ${page.url()}: ${error.message}\n${sp.log()}`)
  })
  await page.getByRole('heading', { name: 'Protected by mellon' }).waitFor()
  return mellonEnvironment((await page.locator('pre').textContent()) ?? '')
}

test('SAML IdP: mod_auth_mellon signs a person in to its protected page (SP-initiated, signed Redirect request), then IdP-initiated', {
  skip: chromiumSkip,
  timeout: 120_000,
}, async (t: TestContext) => {
  const { server, publicUrl } = await startBehindLocalhost(t)
  const tenant = await createTenant(server, { name: 'Acme' })
  const idpEntityId = `${publicUrl}/saml/${tenant.slug}/metadata`
  const metadata = await fetch(idpEntityId)
  assert.equal(metadata.status, 200)
  const sp = await startMellonSp({ idpMetadataXml: await metadata.text() })
  t.after(() => sp.stop())
  const created = await server.request(
    'POST',
    `/v1/${tenant.slug}/applications`,
    {
      name: 'Intranet',
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
  assert.equal(application.saml.spCertificates.length, 1, 'mellon signs its requests')
  const user = await signup(server, tenant.slug, `grace-${Date.now()}@acme.example`)
  await setUser(server, tenant.tenantId, user.user.id, { emailVerified: true })
  // A second role, so that the roles attribute has two values (MELLON_roles_0, _1).
  const token = { token: tenant.admin.accessToken }
  const role = await server.request('POST', `/v1/${tenant.slug}/roles`, { name: 'editor' }, token)
  assert.equal(role.status, 200, JSON.stringify(role.body))
  const roles = { roles: ['editor'] }
  const given = await server.request(
    'PUT',
    `/v1/${tenant.slug}/users/${user.user.id}/roles`,
    roles,
    token,
  )
  assert.equal(given.status, 200, JSON.stringify(given.body))

  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  const seen: { method: string; url: string }[] = []
  page.on('request', (r) => seen.push({ method: r.method(), url: r.url() }))
  await page.goto(sp.protectedUrl)
  await signInOnSignInPage(page, tenant.slug, user)
  const env = await protectedPage(page, sp)
  assert.equal(env.MELLON_NAME_ID, user.email, sp.log())
  assert.equal(env.MELLON_IDP, idpEntityId)
  assert.equal(env.MELLON_mail, user.email)
  assert.deepEqual([env.MELLON_roles_0, env.MELLON_roles_1], ['Member', 'editor'])
  assert.equal(env.MELLON_roles_2, undefined)
  assert.ok(env.MELLON_ASSERTION_ID, 'the assertion mellon took')
  const sso = seen.find((r) => r.url.startsWith(`${publicUrl}/saml/${tenant.slug}/sso?`))
  assert.ok(sso, 'mellon sent its request by HTTP-Redirect')
  const query = new URL(sso.url).searchParams
  assert.ok(query.get('Signature') && query.get('SigAlg'), 'signed')
  // Signed, so it names its Destination (SAML Bindings §3.4.5.2), which the IdP requires.
  const request = inflateRawSync(Buffer.from(query.get('SAMLRequest') ?? '', 'base64')).toString()
  assert.ok(request.includes(`Destination="${publicUrl}/saml/${tenant.slug}/sso"`), request)
  assert.ok(
    seen.some((r) => r.method === 'POST' && r.url === sp.acsUrl),
    'the response was posted to the ACS',
  )
  // mellon's signed request sent again (the browser's history, a copy from a log): the
  // IdP's refusal page, and no second response.
  seen.length = 0
  await page.goto(sso.url)
  await page.getByRole('heading', { name: 'Single sign-on did not work' }).waitFor()
  assert.match((await page.locator('body').textContent()) ?? '', /saml_request_replayed/)
  mkdirSync(RESULT_SHOTS, { recursive: true })
  await visit(page, 'hosted-saml-refusal')
  assert.ok(!seen.some((r) => r.url === sp.acsUrl), 'nothing posted to mellon')
  const logins = (await auditRows(server, tenant.tenantId, 'UserLogin')).filter(
    (e) => (e.metadata as Record<string, unknown>).samlApp === application.id,
  )
  assert.equal(logins.length, 1)

  // IdP-initiated, with mellon's session gone (its cookie cleared) and the hosted one kept:
  // no sign-in page, no AuthnRequest, and mellon takes the unsolicited response.
  const context = page.context()
  const cookies = (await context.cookies()).filter((c) => c.name !== 'mellon-cookie')
  await context.clearCookies()
  await context.addCookies(cookies)
  seen.length = 0
  await page.goto(`${publicUrl}/v1/${tenant.slug}/saml-apps/${application.id}/start`)
  const again = await protectedPage(page, sp)
  assert.equal(again.MELLON_NAME_ID, user.email)
  assert.equal(again.MELLON_IDP, idpEntityId)
  assert.notEqual(again.MELLON_ASSERTION_ID, env.MELLON_ASSERTION_ID, 'a new assertion')
  assert.ok(!seen.some((r) => r.url.includes('/sign-in')), 'the hosted session was reused')
  assert.ok(!seen.some((r) => r.url.includes('/sso?')), 'no AuthnRequest')
  assert.ok(
    seen.some((r) => r.method === 'POST' && r.url === sp.acsUrl),
    'posted to the ACS',
  )
})
