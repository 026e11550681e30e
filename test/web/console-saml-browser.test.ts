// The console's saml applications (CONTRACT §22), in a real browser against the real app: a
// SAML service provider made from its fields (an http ACS off loopback refused at its field
// with nothing stored), then the page of the values to give the SP (the IdP's entity id, SSO
// URL, metadata URL, IdP-initiated link, the signing certificate the metadata publishes).
// axe clean, never wider than a phone, photographed at 1280 and 390 px.
// Needs /usr/bin/chromium; skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, visit } from '../fixtures/console.ts'
import { createTenant, startTestServer, type TestServer } from '../helpers.ts'

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
})

test('console saml application: made from its fields, a bad ACS refused at its field, the values to give the SP', {
  skip,
  timeout: 300_000,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const { page } = await consoleOf(browser, server.url, tenant)
  page.setDefaultTimeout(15_000)
  await page.getByRole('link', { name: 'Applications', exact: true }).click()
  await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor()
  await page.getByLabel('Type').selectOption('saml')
  await page.getByLabel('Name', { exact: true }).fill('Team wiki')
  await page.getByLabel('SP entity ID').fill('https://wiki.initech.example/saml')
  await page.getByLabel('Assertion Consumer Service URLs').fill('http://wiki.initech.example/acs')
  await page.getByLabel('Attributes').fill('mail = email\nroles = roles')
  await unchanged(server, tenant.tenantId, async () => {
    await page.getByRole('button', { name: 'Create application' }).click()
    await page.getByText(/must be https \(or http on localhost/).waitFor()
  })
  await visit(page, 'console-saml-application-refused')
  await page.getByLabel('Assertion Consumer Service URLs').fill('https://wiki.initech.example/acs')
  await page.getByRole('button', { name: 'Create application' }).click()
  await page.getByRole('heading', { name: 'Give these to the service provider' }).waitFor()
  const text = (await page.locator('main').textContent()) ?? ''
  const base = server.deps.config.publicUrl
  assert.ok(text.includes(`${base}/saml/${tenant.slug}/metadata`), text)
  assert.ok(text.includes(`${base}/saml/${tenant.slug}/sso`), text)
  await page.getByText('-----BEGIN CERTIFICATE-----', { exact: false }).waitFor()
  const listed = await server.request('GET', `/v1/${tenant.slug}/applications`, undefined, {
    token: tenant.admin.accessToken,
  })
  const [app] = listed.body.items
  assert.deepEqual(app.saml.attributes, [
    { name: 'mail', from: 'email' },
    { name: 'roles', from: 'roles' },
  ])
  assert.ok(text.includes(`/v1/${tenant.slug}/saml-apps/${app.id}/start`))
  await visit(page, 'console-saml-application')
})
