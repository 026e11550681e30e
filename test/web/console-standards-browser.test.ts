// The console's application form with CONTRACT §22's settings, in a real browser (Debian's
// Chromium through playwright-core) against the real app: a web app made with private key
// JWT, its JWK Set and the FAPI 2.0 profile (PAR and DPoP shown implied); a private key in
// the JWK Set refused at its field with nothing stored; a machine app given token exchange
// and DPoP by editing it. axe clean, never wider than a phone, photographed at 1280 and
// 390 px into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { exportJWK, generateKeyPair } from 'jose'
import type { Browser } from 'playwright-core'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, descriptionOf, visit } from '../fixtures/console.ts'
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

test('console applications security: private key JWT with a JWK Set and FAPI 2.0 on a web app; a private key refused at its field; token exchange and DPoP on a machine app', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella Bank' })
  const list = async () =>
    (
      await server.request('GET', `/v1/${tenant.slug}/applications`, undefined, {
        token: tenant.admin.accessToken,
      })
    ).body.items as Record<string, unknown>[]
  const { context, page } = await consoleOf(browser, server.url, tenant)
  await page.getByRole('link', { name: 'Applications', exact: true }).click()
  await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor()

  const keys = await generateKeyPair('ES256', { extractable: true })
  const publicJwk = { ...(await exportJWK(keys.publicKey)), alg: 'ES256' }
  const privateJwk = await exportJWK(keys.privateKey)

  await page.getByLabel('Name', { exact: true }).fill('Payments')
  await page.getByLabel('Type').selectOption('web')
  await page.getByLabel('Redirect URIs', { exact: true }).fill('https://pay.example.com/callback')
  await page.getByLabel('Client authentication').selectOption('private_key_jwt')
  // A private key: refused beside the JWK Set, nothing stored.
  await page.getByLabel('JWK Set (JSON)').fill(JSON.stringify({ keys: [privateJwk] }))
  await unchanged(server, tenant.tenantId, async () => {
    await page.getByRole('button', { name: 'Create application' }).click()
    const field = page.getByLabel('JWK Set (JSON)')
    await page.getByText('a private key: only the public key may be registered').waitFor()
    assert.match(await descriptionOf(field), /private key/)
  })
  await visit(page, 'console-application-jwks-refused')

  await page.getByLabel('JWK Set (JSON)').fill(JSON.stringify({ keys: [publicJwk] }))
  await page.getByLabel(/FAPI 2\.0 profile/).check()
  // The profile implies PAR and DPoP: shown checked, not to be unchecked.
  assert.ok(await page.getByLabel(/Require pushed authorization requests/).isChecked())
  assert.ok(await page.getByLabel(/Require pushed authorization requests/).isDisabled())
  assert.ok(await page.getByLabel(/Require DPoP/).isChecked())
  await page.getByRole('button', { name: 'Create application' }).click()
  await page.getByRole('heading', { name: 'Payments', level: 2 }).waitFor()
  await page.getByText('FAPI 2.0').first().waitFor()
  const [web] = await list()
  assert.equal(web.tokenEndpointAuthMethod, 'private_key_jwt')
  assert.equal(web.profile, 'fapi2')
  assert.equal(web.requirePushedAuthorizationRequests, true)
  assert.equal(web.requireDpop, true)
  assert.deepEqual(web.jwks, { keys: [publicJwk] })
  await visit(page, 'console-application-fapi2')

  // A machine app, then token exchange and DPoP by editing it.
  await page.getByRole('link', { name: 'Applications', exact: true }).click()
  await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor()
  await page.getByLabel('Name', { exact: true }).fill('Gateway')
  await page.getByLabel('Type').selectOption('machine')
  assert.equal(await page.getByLabel(/Require pushed authorization requests/).count(), 0)
  await page.getByRole('button', { name: 'Create application' }).click()
  await page.getByRole('heading', { name: 'Gateway', level: 2 }).waitFor()
  await page.getByLabel(/Token exchange/).check()
  await page.getByLabel(/Require DPoP/).check()
  await page.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
  const machine = (await list()).find((a) => a.name === 'Gateway')
  assert.equal(machine?.tokenExchange, true)
  assert.equal(machine?.requireDpop, true)
  assert.equal(machine?.tokenEndpointAuthMethod, 'client_secret_basic')
  await visit(page, 'console-application-machine-security')
  await context.close()
})
