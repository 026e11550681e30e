// The console's Applications and API resources pages (CONTRACT §11) in a real browser
// (Debian's Chromium through playwright-core) against the real app, as an admin uses them:
// an application's secret is shown once and works, its quick starts name its client id
// and issuer, a rotated secret replaces the old one at once, a bad redirect URI is shown by
// its field and changes nothing, deletion; API resources with scopes, a duplicate
// identifier refused at its field, and a machine app's client-credentials quick start.
// Every view is checked with axe-core, must not scroll sideways at phone width, and is
// photographed at desktop and phone widths into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, descriptionOf, visit } from '../fixtures/console.ts'
import { issuerOf, oauthError, oidcClient } from '../fixtures/oidc.ts'
import { createTenant, startTestServer, type TenantFixture, type TestServer } from '../helpers.ts'

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

/** Clicks a copy button and answers what it put on the clipboard. */
async function copied(page: Page, button: string): Promise<string> {
  await page.getByRole('button', { name: button, exact: true }).click()
  await page.getByRole('button', { name: 'Copied' }).first().waitFor()
  return page.evaluate(() => navigator.clipboard.readText())
}

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

/** Whether `secret` authenticates the app at the token introspection endpoint. */
async function secretWorks(tenant: TenantFixture, clientId: string, secret: string) {
  const config = await oidcClient(server, tenant.slug, clientId, secret)
  try {
    await client.tokenIntrospection(config, 'not-a-token')
    return true
  } catch (error) {
    const refused = await oauthError(Promise.reject(error))
    assert.equal(refused.error, 'invalid_client')
    return false
  }
}

test('console applications: a web app’s secret is shown once and works, its quick starts name its client id and issuer, rotation replaces it, a bad redirect URI is shown by its field and changes nothing, deletion; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initrode' })
  const issuer = issuerOf(server, tenant.slug)
  const { context, page } = await consoleOf(browser, server.url, tenant)
  await page.getByRole('link', { name: 'Applications', exact: true }).click()
  await page.getByRole('heading', { name: 'Applications', level: 1 }).waitFor()
  await page.getByText('No applications yet').waitFor()

  await page.getByLabel('Name', { exact: true }).fill('Team Notes')
  await page.getByLabel('Type').selectOption('web')
  await page.getByLabel('Redirect URIs', { exact: true }).fill('https://notes.example.com/callback')
  await page.getByRole('button', { name: 'Create application' }).click()
  await page.getByRole('heading', { name: 'Team Notes', level: 2 }).waitFor()
  const listed = await getJson(tenant, '/applications')
  assert.equal(listed.body.items.length, 1)
  const app = listed.body.items[0]

  // The secret, once, with the message to copy it now; it authenticates the app.
  const status = page.getByRole('status').filter({ hasText: 'Copy the client secret now' })
  const secret = (await status.getByTestId('client-secret').textContent()) ?? ''
  assert.ok(secret.length >= 32, secret)
  assert.equal(await copied(page, 'Copy secret'), secret)
  assert.ok(await secretWorks(tenant, app.clientId, secret))

  // Issuer, discovery URL and client id, each to copy; the quick starts name them.
  assert.equal(await copied(page, 'Copy client id'), app.clientId)
  assert.equal(await copied(page, 'Copy issuer'), issuer)
  assert.equal(
    await copied(page, 'Copy discovery url'),
    `${issuer}/.well-known/openid-configuration`,
  )
  const openidClient = await copied(page, 'Copy openid-client (v6): server-side sign-in')
  assert.ok(openidClient.includes(`new URL('${issuer}')`), openidClient)
  assert.ok(openidClient.includes(`'${app.clientId}'`), openidClient)
  assert.ok(openidClient.includes('client.ClientSecretBasic('), openidClient)
  const authJs = await copied(page, 'Copy Auth.js (next-auth v5)')
  assert.ok(authJs.includes(`issuer: '${issuer}'`), authJs)
  assert.ok(authJs.includes(`clientId: '${app.clientId}'`), authJs)
  const apache = await copied(page, 'Copy Apache mod_auth_openidc')
  for (const line of [
    `OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration`,
    `OIDCClientID ${app.clientId}`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Apache's own variable syntax
    'OIDCClientSecret ${OIDC_CLIENT_SECRET}',
    'OIDCRedirectURI https://notes.example.com/callback',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Apache's own variable syntax
    'OIDCCryptoPassphrase ${OIDC_CRYPTO_PASSPHRASE}',
  ]) {
    assert.ok(apache.split('\n').includes(line), `${line} in\n${apache}`)
  }
  assert.ok(!(openidClient + authJs + apache).includes(secret), 'no quick start holds the secret')
  await visit(page, 'console-application-created')

  // A reload shows the application without its secret.
  await page.reload()
  await page.getByRole('heading', { name: 'Team Notes', level: 2 }).waitFor()
  await page.getByText(app.clientId).first().waitFor()
  assert.equal(await page.getByTestId('client-secret').count(), 0)
  assert.ok(!(await page.content()).includes(secret))

  // Rotation: a new secret, shown once; the old one is refused at once.
  await page.getByRole('button', { name: 'Rotate secret' }).click()
  await page.getByRole('button', { name: 'Yes' }).click()
  const rotated = (await page.getByTestId('client-secret').textContent()) ?? ''
  assert.ok(rotated.length >= 32 && rotated !== secret)
  assert.equal(await secretWorks(tenant, app.clientId, secret), false)
  assert.ok(await secretWorks(tenant, app.clientId, rotated))
  await page.getByRole('button', { name: 'Done' }).click()
  assert.equal(await page.getByTestId('client-secret').count(), 0)

  // A bad redirect URI: the API's message at the field, by its line; nothing changed.
  const redirects = page.getByLabel('Redirect URIs', { exact: true })
  await redirects.fill('https://notes.example.com/callback\nhttp://notes.example.com/callback')
  const wrong = 'Line 2: http is allowed only for localhost, 127.0.0.1 and [::1]'
  await unchanged(server, tenant.tenantId, async () => {
    await page.getByRole('button', { name: 'Save application' }).click()
    await page.getByText(wrong).waitFor()
  })
  assert.equal(await redirects.getAttribute('aria-invalid'), 'true')
  assert.ok((await descriptionOf(redirects)).includes(wrong))
  assert.deepEqual((await getJson(tenant, `/applications/${app.id}`)).body.application, app)
  await visit(page, 'console-application-invalid')

  // A good one is saved.
  await redirects.fill('https://notes.example.com/callback\nhttps://notes.example.com/cb2')
  await page.getByRole('button', { name: 'Save application' }).click()
  await page.getByText('Saved.').waitFor()
  const saved = await getJson(tenant, `/applications/${app.id}`)
  assert.deepEqual(saved.body.application.redirectUris, [
    'https://notes.example.com/callback',
    'https://notes.example.com/cb2',
  ])

  // The list, then deletion.
  await page.getByRole('link', { name: 'All applications' }).click()
  await page.getByRole('link', { name: 'Team Notes' }).waitFor()
  await page.getByRole('cell', { name: app.clientId }).waitFor()
  await visit(page, 'console-applications')
  await page.getByRole('link', { name: 'Team Notes' }).click()
  await page.getByRole('button', { name: 'Delete application' }).click()
  await page.getByRole('button', { name: 'Yes' }).click()
  await page.getByText('No applications yet').waitFor()
  assert.equal((await getJson(tenant, `/applications/${app.id}`)).status, 404)
  await context.close()
})

test('console API resources: created with scopes, a duplicate identifier refused at its field (identifier_taken), a bad lifetime changes nothing; a machine app’s quick starts get a token; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Vandelay' })
  const issuer = issuerOf(server, tenant.slug)
  const { context, page } = await consoleOf(browser, server.url, tenant)
  await page.getByRole('link', { name: 'API resources', exact: true }).click()
  await page.getByRole('heading', { name: 'API resources', level: 1 }).waitFor()

  const create = async (name: string) => {
    await page.getByLabel('Name', { exact: true }).first().fill(name)
    await page.getByLabel(/^Identifier/).fill('https://reports.example.com')
    const first = page.getByRole('group', { name: 'Scope 1' })
    await first.getByLabel('Name').fill('reports:read')
    await first.getByLabel('Description (optional)').fill('Read reports')
    await page.getByRole('button', { name: 'Add a scope' }).click()
    const second = page.getByRole('group', { name: 'Scope 2' })
    await second.getByLabel('Name').fill('reports:write')
    await second.getByLabel('Member').uncheck()
    await page.getByRole('button', { name: 'Create API resource' }).click()
  }
  await create('Reports')
  await page.getByRole('cell', { name: 'reports:read reports:write' }).waitFor()
  const listed = await getJson(tenant, '/api-resources')
  assert.equal(listed.body.items.length, 1)
  const resource = listed.body.items[0]
  assert.deepEqual(resource.scopes, [
    { name: 'reports:read', description: 'Read reports', roles: ['Member', 'Admin'] },
    { name: 'reports:write', description: null, roles: ['Admin'] },
  ])
  assert.equal(resource.accessTokenTtlSeconds, 900)

  // The same identifier again: 409 identifier_taken, said at the field; still one resource.
  const identifier = page.getByLabel(/^Identifier/)
  const taken = 'An API resource of this workspace already has this identifier.'
  await unchanged(server, tenant.tenantId, async () => {
    await create('Reports again')
    await page.getByText(taken).waitFor()
  })
  assert.equal(await identifier.getAttribute('aria-invalid'), 'true')
  assert.ok((await descriptionOf(identifier)).includes(taken))
  assert.equal((await getJson(tenant, '/api-resources')).body.items.length, 1)
  await visit(page, 'console-api-resources')

  // Edit: a lifetime under 60 s is refused by its field and changes nothing; 3600 is saved.
  await page.getByRole('link', { name: 'Edit Reports' }).click()
  await page.getByRole('heading', { name: 'Reports', level: 2 }).waitFor()
  const ttl = page.getByLabel(/^Access token lifetime/)
  await ttl.fill('30')
  await unchanged(server, tenant.tenantId, async () => {
    await page.getByRole('button', { name: 'Save API resource' }).click()
    await page.getByText('must be >= 60').waitFor()
  })
  assert.ok((await descriptionOf(ttl)).includes('must be >= 60'))
  const same = await getJson(tenant, `/api-resources/${resource.id}`)
  assert.deepEqual(same.body.apiResource, resource)
  await visit(page, 'console-api-resource-edit')
  await ttl.fill('3600')
  await page.getByRole('button', { name: 'Save API resource' }).click()
  await page.getByText('Saved.').waitFor()
  const saved = await getJson(tenant, `/api-resources/${resource.id}`)
  assert.equal(saved.body.apiResource.accessTokenTtlSeconds, 3600)

  // A machine app allowed reports:read: its quick starts ask the token endpoint for it.
  await page.getByRole('link', { name: 'Applications', exact: true }).click()
  await page.getByRole('heading', { name: 'New application' }).waitFor()
  await page.getByLabel('Name', { exact: true }).fill('Nightly export')
  await page.getByLabel('Type').selectOption('machine')
  await page.getByLabel('Allowed scopes').fill('reports:read')
  await page.getByRole('button', { name: 'Create application' }).click()
  await page.getByRole('heading', { name: 'Nightly export', level: 2 }).waitFor()
  const secret = (await page.getByTestId('client-secret').textContent()) ?? ''
  const app = (await getJson(tenant, '/applications')).body.items[0]
  assert.deepEqual(app.allowedScopes, ['reports:read'])
  const curl = await copied(page, 'Copy curl: a token by client credentials')
  assert.ok(curl.includes(`'${issuer}/token'`), curl)
  assert.ok(curl.includes(`-u '${app.clientId}':"$CLIENT_SECRET"`), curl)
  assert.ok(curl.includes("'scope=reports:read'"), curl)
  assert.ok(curl.includes("'resource=https://reports.example.com'"), curl)
  const code = await copied(page, 'Copy openid-client (v6): a token by client credentials')
  assert.ok(code.includes(`'${app.clientId}'`) && code.includes(`new URL('${issuer}')`), code)
  // What the snippets ask for, with the secret shown: a token for the API.
  const config = await oidcClient(server, tenant.slug, app.clientId, secret)
  const token = await client.clientCredentialsGrant(config, {
    scope: 'reports:read',
    resource: 'https://reports.example.com',
  })
  assert.equal(token.scope, 'reports:read')
  await visit(page, 'console-application-machine')

  // Deleting the resource from its row.
  await page.getByRole('link', { name: 'API resources', exact: true }).click()
  const row = page.getByRole('row', { name: /Reports/ })
  await row.getByRole('button', { name: 'Delete' }).click()
  await row.getByRole('button', { name: 'Yes' }).click()
  await page.getByText('No API resources yet').waitFor()
  assert.equal((await getJson(tenant, `/api-resources/${resource.id}`)).status, 404)
  await context.close()
})
