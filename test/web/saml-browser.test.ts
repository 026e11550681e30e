// SAML sign-in in a real browser against a real IdP (CONTRACT §12): Chromium leaves the
// hosted pages for SimpleSAMLphp (test/fixtures/simplesamlphp.ts), signs in there with a user
// of its static list, and comes back through our ACS signed in on the account page. The
// connection is made from the IdP's own metadata document, as an admin would paste it.
//
// The service is reached at http://localhost:<port> (test/fixtures/secure-origin.ts) and the
// IdP at http://localhost:<its port>: same-site, so the binding cookie (Lax over plain http;
// SameSite=None; Secure over https) comes back with the IdP's cross-origin POST.
// Needs /usr/bin/chromium (skipped without it) and SimpleSAMLphp (fails without it).
import assert from 'node:assert/strict'
import { after, before, type TestContext, test } from 'node:test'
import type { Page } from 'playwright-core'
import { auditRows } from '../db.ts'
import { chromiumSkip } from '../fixtures/browser.ts'
import { launchChromium, startBehindLocalhost } from '../fixtures/secure-origin.ts'
import { type SimpleSamlIdp, SSP_USERS, startSimpleSamlPhp } from '../fixtures/simplesamlphp.ts'
import { createTenant } from '../helpers.ts'

let ssp: SimpleSamlIdp | undefined

before(async () => {
  ssp = await startSimpleSamlPhp({ host: 'localhost' })
})

after(async () => {
  await ssp?.stop()
})

/** SimpleSAMLphp's login form (its own markup: the fields' names, its button). */
async function signInAtIdp(page: Page, user: { username: string; password: string }) {
  await page.waitForURL(/\/simplesaml\//, { timeout: 15_000 })
  await page.locator('input[name="username"]').fill(user.username)
  await page.locator('input[name="password"]').fill(user.password)
  await page.locator('button[type="submit"], input[type="submit"]').first().click()
}

/** A service, a tenant with a SAML connection made from the IdP's metadata, a browser. */
async function setup(t: TestContext) {
  assert.ok(ssp)
  // The IdP is plain http on a loopback address, which only WEBHOOK_ALLOW_PRIVATE admits.
  const { server, publicUrl } = await startBehindLocalhost(t, { webhookAllowPrivate: true })
  const tenant = await createTenant(server, { name: 'Corp' })
  const created = await server.request(
    'POST',
    `/v1/${tenant.slug}/sso-connections`,
    {
      name: 'Corp IdP',
      type: 'saml',
      domains: ['corp.example'],
      saml: { idpMetadataXml: await ssp.metadataXml() },
    },
    { token: tenant.admin.accessToken },
  )
  assert.equal(created.status, 200, JSON.stringify(created.body))
  const { connection } = created.body
  assert.equal(connection.saml.idpEntityId, ssp.entityId)
  ssp.registerSp({ entityId: connection.saml.spEntityId, acsUrl: connection.saml.acsUrl })
  const browser = await launchChromium(t)
  const page = await (await browser.newContext()).newPage()
  return { server, publicUrl, tenant, connection, page }
}

async function assertSignedIn(s: Awaited<ReturnType<typeof setup>>) {
  const { page, publicUrl, server, tenant, connection } = s
  await page.waitForURL(`${publicUrl}/t/${tenant.slug}/account`, { timeout: 20_000 })
  assert.match((await page.locator('main').textContent()) ?? '', /ada@corp\.example/)
  const logins = await auditRows(server, tenant.tenantId, 'UserLogin')
  const sso = logins.filter((e) => (e.metadata as Record<string, unknown>).method === 'sso')
  assert.equal(sso.length, 1)
  assert.equal((sso[0].metadata as Record<string, unknown>).connectionId, connection.id)
  assert.equal((await auditRows(server, tenant.tenantId, 'SsoIdentityLinked')).length, 1)
}

test('SAML: from the hosted page of the connection through SimpleSAMLphp and back signed in', {
  skip: chromiumSkip,
}, async (t) => {
  const s = await setup(t)
  // The hosted link that names the connection (CONTRACT §12), as a person follows it.
  await s.page.goto(`${s.publicUrl}/t/${s.tenant.slug}/sso/${s.connection.id}`)
  await signInAtIdp(s.page, SSP_USERS[0])
  await assertSignedIn(s)
})

test('SAML: from the sign-in page\'s "Sign in with SSO" form through SimpleSAMLphp and back', {
  skip: chromiumSkip,
}, async (t) => {
  const s = await setup(t)
  await s.page.goto(`${s.publicUrl}/t/${s.tenant.slug}/sign-in`)
  await s.page.getByRole('link', { name: 'Sign in with SSO' }).click()
  await s.page.getByLabel('Email address').fill('ada@corp.example')
  await s.page.getByRole('button', { name: 'Continue' }).click()
  await signInAtIdp(s.page, SSP_USERS[0])
  await assertSignedIn(s)
})
