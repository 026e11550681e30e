// The console's Roles page and a user's roles (CONTRACT §17) in a real browser (Debian's
// Chromium through playwright-core) against the real app, as an admin uses it: the built-ins
// listed and not editable; a role created with two permissions of the catalogue and a scope
// of an API resource (picked under that resource); a taken name (in another case) refused
// by the name field and nothing changed; the role given to a Member from Users and shown in
// their row; that Member signing in sees only the areas their role opens and no action it
// does not; an edit and a confirmed deletion. Every view is checked with axe-core, must not
// scroll sideways at phone width, and is photographed at desktop and phone widths into
// test-results/screenshots/ (CONSOLE_SHOTS to choose).
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { unchanged } from '../db.ts'
import { insertApiKey } from '../fixtures/apikeys.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, descriptionOf, VIEWPORTS, visit } from '../fixtures/console.ts'
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

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

/** A user's record as the admin API lists it. */
async function userOf(tenant: TenantFixture, id: string) {
  const { items } = (await getJson(tenant, '/users?limit=100')).body
  return items.find((u: { id: string }) => u.id === id)
}

test('console roles: built-ins listed and not editable; a role of two permissions and an API scope created; a taken name refused at its field with nothing changed; given to a Member in Users and shown there; the Member sees only what it opens; edit, delete; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const resource = await server.request(
    'POST',
    `/v1/${tenant.slug}/api-resources`,
    {
      name: 'Reports API',
      identifier: 'https://reports.globex.example',
      scopes: [
        { name: 'reports:read', description: 'Read reports' },
        { name: 'reports:write', description: 'Write reports' },
      ],
    },
    { token: tenant.admin.accessToken },
  )
  assert.equal(resource.status, 200, JSON.stringify(resource.body))
  const member = await signup(server, tenant.slug)
  let supportId = ''
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'Roles', exact: true }).click()
    await page.getByRole('heading', { name: 'Roles', level: 1 }).waitFor()
    // The built-ins, marked and not links to a form.
    for (const name of ['Admin', 'Member']) {
      const row = page.getByRole('row').filter({ hasText: name }).first()
      await row.getByText('Built-in').waitFor()
      assert.equal(await row.getByRole('link', { name }).count(), 0)
    }
    await page.getByRole('cell', { name: '14 permissions' }).waitFor()
    // A built-in's own address shows it cannot be changed, and no form.
    await page.goto(`${server.url}/console/#roles?id=Admin`)
    await page.getByText('A built-in role: it cannot be changed or deleted.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Save role' }).count(), 0)
    await page.getByRole('link', { name: 'All roles' }).click()

    // The form: the catalogue with what each permission guards, the scopes under their resource.
    const form = page.locator('form.role-form')
    await form.getByText('Read and export the audit log.').waitFor()
    const reports = form.getByRole('group', { name: /Reports API/ })
    await reports.getByLabel('reports:read').waitFor()
    await form.getByLabel('Name').fill('Support')
    await form.getByLabel('Description (optional)').fill('Answers tickets')
    await form.getByLabel('audit:read').check()
    await form.getByLabel('users:read').check()
    await reports.getByLabel('reports:read').check()
    await form.getByText('Permissions (2 of 14 chosen)').waitFor()
    await visit(page, 'console-role-form', SHOTS)
    await form.getByRole('button', { name: 'Create role' }).click()
    await page.getByRole('status').filter({ hasText: 'Role Support created.' }).waitFor()
    await page.getByRole('link', { name: 'Support', exact: true }).waitFor()
    await page.getByRole('cell', { name: '2 permissions, 1 API scope' }).waitFor()
    const roles = (await getJson(tenant, '/roles')).body.items
    const support = roles.find((r: { name: string }) => r.name === 'Support')
    assert.deepEqual(support.permissions, ['audit:read', 'users:read'])
    assert.deepEqual(support.resourceScopes, [
      { resource: 'https://reports.globex.example', scopes: ['reports:read'] },
    ])
    assert.equal(support.description, 'Answers tickets')
    supportId = support.id
    // The form is empty again for the next one.
    assert.equal(await form.getByLabel('Name').inputValue(), '')
    assert.equal(await form.getByLabel('users:read').isChecked(), false)
    await visit(page, 'console-roles', SHOTS)

    // The same name in another case: refused at the name field (409 name_taken), nothing changed.
    const name = form.getByLabel('Name')
    await name.fill('support')
    await form.getByLabel('tenant:read').check()
    await unchanged(server, tenant.tenantId, async () => {
      await form.getByRole('button', { name: 'Create role' }).click()
      await form.locator('.field-error').waitFor()
    })
    assert.equal(await name.getAttribute('aria-invalid'), 'true')
    assert.match(await descriptionOf(name), /already/i)
    assert.equal((await getJson(tenant, '/roles')).body.items.length, 3)
    await visit(page, 'console-role-taken', SHOTS)

    // Users: the Member's row, their roles ticked and saved, shown in the row.
    await page.getByRole('link', { name: 'Users', exact: true }).click()
    const row = page.getByRole('row').filter({ hasText: member.email })
    await row.getByRole('button', { name: `Roles of ${member.email}` }).click()
    const choice = page.getByRole('group', { name: `Custom roles of ${member.email}` })
    await choice.getByLabel('Support').check()
    await visit(page, 'console-user-roles', SHOTS)
    await page.getByRole('button', { name: 'Save roles' }).click()
    await row.getByRole('cell', { name: 'Support', exact: true }).waitFor()
    assert.equal(await choice.count(), 0, 'the choice closes once saved')
    const held = await userOf(tenant, member.user.id)
    assert.deepEqual(held.roles, ['Support'])
    assert.equal(held.role, 'Member')
    await visit(page, 'console-users-with-roles', SHOTS)
  } finally {
    await context.close()
  }

  // The Member signs in: Users and the audit log only (users:read, audit:read), and their
  // rows show values, not the controls that need users:write or roles:write.
  const own = await browser.newContext({ viewport: VIEWPORTS.desktop })
  try {
    const page = await own.newPage()
    await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
    await page.getByLabel('Email address').fill(member.email)
    await page.getByLabel('Password').fill(STRONG_PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    const nav = page.getByRole('navigation', { name: 'Console' })
    assert.deepEqual(await nav.getByRole('link').allTextContents(), [
      'Users',
      'Groups',
      'Audit log',
    ])
    const adminRow = page.getByRole('row').filter({ hasText: tenant.adminEmail })
    await adminRow.getByRole('cell', { name: 'Admin', exact: true }).waitFor()
    assert.equal(await page.getByRole('combobox').count(), 0)
    assert.equal(await page.getByRole('button', { name: /^(Suspend|Delete|Roles)/ }).count(), 0)
    // The admin's sessions are listed, with no End session (that takes users:write).
    await adminRow.getByRole('button', { name: 'Sessions' }).click()
    await page.locator('.sessions li').first().waitFor()
    assert.equal(await page.getByRole('button', { name: 'End session' }).count(), 0)
    // An area the role does not open, by its address: the first one it does.
    await page.goto(`${server.url}/console/#roles`)
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    await visit(page, 'console-member-with-role', SHOTS)
  } finally {
    await own.close()
  }

  // Edit and delete, as the admin.
  const again = await consoleOf(browser, server.url, tenant)
  try {
    const page = again.page
    await page.getByRole('link', { name: 'Roles', exact: true }).click()
    await page.getByRole('link', { name: 'Support', exact: true }).click()
    await page.getByRole('heading', { name: 'Support', level: 2 }).waitFor()
    const form = page.locator('form.role-form')
    assert.equal(await form.getByLabel('users:read').isChecked(), true)
    assert.equal(await form.getByLabel('reports:read').isChecked(), true)
    await form.getByLabel('audit:read').uncheck()
    await form.getByRole('button', { name: 'Save role' }).click()
    await page.getByText('Saved.').waitFor()
    const saved = (await getJson(tenant, `/roles/${supportId}`)).body.role
    assert.deepEqual(saved.permissions, ['users:read'])
    assert.equal(saved.description, 'Answers tickets', 'what was not changed stays')
    await visit(page, 'console-role-edit', SHOTS)
    await page.getByRole('button', { name: 'Delete role' }).click()
    await page.getByRole('button', { name: 'Yes' }).click()
    await page.getByRole('heading', { name: 'New role', level: 2 }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'Support', exact: true }).count(), 0)
    assert.equal((await getJson(tenant, `/roles/${supportId}`)).status, 404)
    const after = await userOf(tenant, member.user.id)
    assert.deepEqual(after.roles, [])
  } finally {
    await again.context.close()
  }
})

test('console groups: a SCIM group listed with its members; its roles set from Groups, shown in the list and held by its member; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const token = tenant.admin.accessToken
  const made = await server.request(
    'POST',
    `/v1/${tenant.slug}/roles`,
    { name: 'Auditors', permissions: ['audit:read'] },
    { token },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const member = await signup(server, tenant.slug)
  const key = await insertApiKey(server, tenant.tenantId)
  const group = await server.request(
    'POST',
    `/scim/v2/${tenant.slug}/Groups`,
    { displayName: 'Finance', externalId: 'fin-7', members: [{ value: member.user.id }] },
    { token: key },
  )
  assert.equal(group.status, 201, JSON.stringify(group.body))
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'Groups', exact: true }).click()
    await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor()
    const row = page.getByRole('row', { name: /Finance/ })
    await row.waitFor()
    assert.match((await row.textContent()) ?? '', /fin-7/)
    await visit(page, 'console-groups', SHOTS)
    await page.getByRole('button', { name: 'Roles of Finance' }).click()
    const choice = page.getByRole('group', { name: 'Custom roles of the group Finance' })
    await choice.getByRole('checkbox', { name: 'Auditors' }).check()
    await visit(page, 'console-group-roles', SHOTS)
    await page.getByRole('button', { name: 'Save roles' }).click()
    await page.getByRole('cell', { name: 'Auditors' }).waitFor()
    assert.equal(await choice.count(), 0, 'the choice closes once saved')
    await visit(page, 'console-groups-with-roles', SHOTS)
  } finally {
    await context.close()
  }
  // The member holds the group's role: in their record, and the audit log opens to them.
  assert.deepEqual((await userOf(tenant, member.user.id)).roles, ['Auditors'])
  const audit = await server.request('GET', `/v1/${tenant.slug}/audit?limit=1`, undefined, {
    token: member.accessToken,
  })
  assert.equal(audit.status, 200)
})
