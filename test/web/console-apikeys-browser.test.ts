// The console's API keys and their permissions (CONTRACT §17, API keys) in a real browser
// (Debian's Chromium through playwright-core) against the real app: the catalogue's
// permissions ticked by default as the creator's own (an Admin's: every one), a key made
// with one permission holding only it (the API then refuses it the others), the list
// showing what each key holds; a Member whose role holds apikeys:write and users:read sees
// those two ticked and the others not to be ticked, and its key holds those two. Every view
// is checked with axe-core, must not scroll sideways at phone width, and is photographed at
// desktop and phone widths into test-results/screenshots/ (CONSOLE_SHOTS to choose).
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { expectError } from '../envelope.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, VIEWPORTS, visit } from '../fixtures/console.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const SHOTS = process.env.CONSOLE_SHOTS ?? RESULT_SHOTS

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
  mkdirSync(SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
})

/** The keys the admin API lists, by name. */
async function keyNamed(tenant: TenantFixture, name: string) {
  const res = await server.request('GET', `/v1/${tenant.slug}/api-keys?limit=100`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items.find((k: { name: string }) => k.name === name)
}

async function createKey(page: Page, name: string): Promise<string> {
  await page.getByLabel('Name', { exact: true }).fill(name)
  await page.getByRole('button', { name: 'Create key' }).click()
  const panel = page.getByRole('status').filter({ hasText: 'Copy the key now' })
  const secret = (await panel.getByRole('code').textContent()) ?? ''
  assert.match(secret, /^ak_live_/)
  return secret
}

test("console API keys: permissions ticked as the creator's own; a key of one permission holds only it and the list says so; a Member's choice is its own permissions; axe clean, no view wider than a phone", {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'API keys', exact: true }).click()
    const choice = page.getByRole('group', { name: /Permissions of the key/ })
    // An Admin holds every permission: all of them ticked, none barred.
    await choice.getByText('Permissions of the key (14 of 14 chosen)').waitFor()
    assert.equal(await choice.getByRole('checkbox', { checked: true }).count(), 14)
    assert.equal(await choice.getByRole('checkbox', { disabled: true }).count(), 0)
    await choice.getByText('Read and export the audit log.').waitFor()
    assert.equal(await choice.getByText('A key holds only permissions you hold').count(), 0)
    const everything = await createKey(page, 'Everything')
    const table = page.getByRole('table', { name: 'API keys' })
    const rowOf = (name: string) => table.getByRole('row').filter({ hasText: name })
    await rowOf('Everything').getByRole('cell', { name: 'Every permission' }).waitFor()
    assert.equal((await keyNamed(tenant, 'Everything')).permissions.length, 14)
    await page.getByRole('button', { name: 'Done' }).click()

    // One permission: untick them all, tick users:read.
    for (const box of await choice.getByRole('checkbox').all()) await box.uncheck()
    await choice.getByLabel('users:read').check()
    await choice.getByText('Permissions of the key (1 of 14 chosen)').waitFor()
    await visit(page, 'console-api-key-form', SHOTS)
    const reader = await createKey(page, 'Reporting')
    await rowOf('Reporting').getByRole('cell', { name: 'users:read', exact: true }).waitFor()
    assert.deepEqual((await keyNamed(tenant, 'Reporting')).permissions, ['users:read'])
    // The choice is back to the creator's own for the next key.
    await choice.getByText('Permissions of the key (14 of 14 chosen)').waitFor()
    await visit(page, 'console-api-keys-permissions', SHOTS)
    // The key holds what the list says: users read, the audit log refused.
    const as = (token: string, path: string) =>
      server.request('GET', `/v1/${tenant.slug}${path}`, undefined, { token })
    assert.equal((await as(reader, '/users')).status, 200)
    expectError(await as(reader, '/audit'), 403, 'permission_required')
    assert.equal((await as(everything, '/audit')).status, 200)
  } finally {
    await context.close()
  }

  // A Member whose role holds apikeys:write and users:read.
  const call = async (method: string, path: string, body: unknown) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, {
      token: tenant.admin.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  const member = await signup(server, tenant.slug)
  await call('POST', '/roles', {
    name: 'Integrations',
    permissions: ['apikeys:write', 'users:read'],
  })
  await call('PUT', `/users/${member.user.id}/roles`, { roles: ['Integrations'] })
  const own = await browser.newContext({ viewport: VIEWPORTS.desktop })
  try {
    const page = await own.newPage()
    await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
    await page.getByLabel('Email address').fill(member.email)
    await page.getByLabel('Password').fill(STRONG_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('link', { name: 'API keys', exact: true }).click()
    const choice = page.getByRole('group', { name: /Permissions of the key/ })
    await choice.getByText('Permissions of the key (2 of 14 chosen)').waitFor()
    assert.equal(await choice.getByLabel('users:read').isChecked(), true)
    assert.equal(await choice.getByLabel('apikeys:write').isChecked(), true)
    assert.equal(await choice.getByLabel('audit:read').isDisabled(), true)
    assert.equal(await choice.getByRole('checkbox', { disabled: true }).count(), 12)
    await choice.getByText('A key holds only permissions you hold yourself').waitFor()
    await visit(page, 'console-api-key-form-member', SHOTS)
    await createKey(page, 'Member key')
    const table = page.getByRole('table', { name: 'API keys' })
    await table
      .getByRole('row')
      .filter({ hasText: 'Member key' })
      .getByRole('cell', { name: 'apikeys:write, users:read' })
      .waitFor()
    assert.deepEqual((await keyNamed(tenant, 'Member key')).permissions, [
      'apikeys:write',
      'users:read',
    ])
  } finally {
    await own.close()
  }
})
