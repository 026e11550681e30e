// The console's Organizations page (CONTRACT §18) in a real browser (Debian's Chromium
// through playwright-core) against the real app, as an admin uses it: an organization role
// made in Roles (kind organization); an organization created with a description, the
// second factor and JIT domains and roles, after a domain another organization claims was
// refused at the domains field (409 domain_taken) with nothing changed; a user added as a
// member by address with a role, their roles set again from their row, removed after a
// confirmation; an invitation made with a role whose link is shown once, listed pending and
// revoked after a confirmation; an edit, a refused edit, and a confirmed deletion; the list
// paged by Load more. Every view is checked with axe-core, must not scroll sideways at phone
// width, and is photographed at desktop and phone widths into test-results/screenshots/
// (CONSOLE_SHOTS to choose). On PGlite, or on PostgreSQL with DATABASE_URL.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, flagged, visit } from '../fixtures/console.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
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

async function api(tenant: TenantFixture, method: string, path: string, body?: unknown) {
  const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, {
    token: tenant.admin.accessToken,
  })
  return res
}

test('console organizations: an organization role made in Roles; an organization created with JIT domains and roles after a taken domain was refused at its field with nothing changed; a member added by address, their roles set, removed; an invitation whose link shows once, revoked; edit, refused edit, delete; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const taken = await api(tenant, 'POST', '/organizations', {
    name: 'Initech',
    jit: { emailDomains: ['initech.example'], roles: [] },
  })
  assert.equal(taken.status, 200, JSON.stringify(taken.body))
  const member = await signup(server, tenant.slug)
  const invitee = uniqueEmail('invitee')
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    // Roles: an organization role, which holds no permission (the catalogue is not offered).
    await page.getByRole('link', { name: 'Roles', exact: true }).click()
    const roleForm = page.locator('form.role-form')
    await roleForm.getByLabel('Name').fill('Billing')
    await roleForm.getByLabel(/^Organization role/).check()
    assert.equal(await roleForm.getByLabel('audit:read').count(), 0)
    await roleForm.getByRole('button', { name: 'Create role' }).click()
    await page.getByRole('status').filter({ hasText: 'Role Billing created.' }).waitFor()
    const billing = (await api(tenant, 'GET', '/roles')).body.items.find(
      (r: { name: string }) => r.name === 'Billing',
    )
    assert.equal(billing.kind, 'organization')
    assert.deepEqual(billing.permissions, [])

    await page.getByRole('link', { name: 'Organizations', exact: true }).click()
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor()
    await page.getByRole('link', { name: 'Initech' }).waitFor()

    // A domain Initech claims: refused at the domains field, nothing made.
    const form = page.locator('form.org-form')
    await form.getByLabel('Name').fill('Acme')
    await form.getByLabel('Description (optional)').fill('Our first customer')
    await form.getByLabel(/second factor/).check()
    const domains = form.getByLabel('Email domains')
    await domains.fill('acme.example\ninitech.example')
    await form.getByLabel('Billing').check()
    await unchanged(server, tenant.tenantId, async () => {
      await form.getByRole('button', { name: 'Create organization' }).click()
      await form.locator('.field-error').waitFor()
    })
    await flagged(domains, /already claims/)
    await visit(page, 'console-organization-form', SHOTS)
    // A malformed domain: its line named.
    await domains.fill('acme.example\nnot a domain')
    await unchanged(server, tenant.tenantId, async () => {
      await form.getByRole('button', { name: 'Create organization' }).click()
      await form.getByText(/^Line 2: /).waitFor()
    })
    await flagged(domains, /Line 2: not a domain is no email domain/)

    await domains.fill('Acme.Example')
    await form.getByRole('button', { name: 'Create organization' }).click()
    await page.getByRole('heading', { name: 'Acme', level: 2 }).waitFor()
    const orgs = (await api(tenant, 'GET', '/organizations')).body.items
    const acme = orgs.find((o: { name: string }) => o.name === 'Acme')
    assert.deepEqual(
      {
        description: acme.description,
        mfaRequired: acme.mfaRequired,
        jit: acme.jit,
        memberCount: acme.memberCount,
      },
      {
        description: 'Our first customer',
        mfaRequired: true,
        jit: { emailDomains: ['acme.example'], roles: ['Billing'] },
        memberCount: 0,
      },
    )
    assert.match(page.url(), new RegExp(`#organizations\\?id=${acme.id}$`))

    // A member added by address, with Billing.
    const members = page.getByRole('region', { name: 'Members' })
    await page.getByText('No members yet').waitFor()
    const add = page.locator('form.org-add')
    await add.getByLabel('User').fill(member.email.toUpperCase())
    await add.getByLabel('Billing').check()
    await add.getByRole('button', { name: 'Add member' }).click()
    const row = members.getByRole('row').filter({ hasText: member.email })
    await row.getByRole('cell', { name: 'Billing', exact: true }).waitFor()
    let listed = (await api(tenant, 'GET', `/organizations/${acme.id}/members`)).body.items
    assert.deepEqual(
      listed.map((m: { userId: string; roles: string[] }) => [m.userId, m.roles]),
      [[member.user.id, ['Billing']]],
    )
    // An address no user has: said plainly, nothing changed.
    await unchanged(server, tenant.tenantId, async () => {
      await add.getByLabel('User').fill('nobody@nowhere.example')
      await add.getByRole('button', { name: 'Add member' }).click()
      await add.getByRole('alert').filter({ hasText: 'No user of this workspace' }).waitFor()
    })
    await add.getByLabel('User').fill('')

    // An invitation with Billing, no mail: its link shown this once.
    const invite = page.locator('form.org-invite')
    await invite.getByLabel('Email address').fill(invitee)
    await invite.getByLabel('Billing').check()
    await invite.getByLabel('Send the invitation by email').uncheck()
    await invite.getByRole('button', { name: 'Invite' }).click()
    const link = await page.getByTestId('organization-invite-link').textContent()
    assert.match(
      link ?? '',
      new RegExp(`^${server.url}/t/${tenant.slug}/organization-invite\\?token=[A-Za-z0-9_-]{43}$`),
    )
    const invitations = page.getByRole('region', { name: 'Invitations' })
    const pending = invitations.getByRole('row').filter({ hasText: invitee })
    await pending.getByRole('cell', { name: 'Pending' }).waitFor()
    const stored = (await api(tenant, 'GET', `/organizations/${acme.id}/invitations`)).body.items
    assert.deepEqual(
      stored.map((i: { email: string; roles: string[]; status: string }) => [
        i.email,
        i.roles,
        i.status,
      ]),
      [[invitee, ['Billing'], 'Pending']],
    )
    await visit(page, 'console-organization', SHOTS)
    // The link is not kept: the page read again shows none.
    await page.reload()
    await page.getByRole('heading', { name: 'Acme', level: 2 }).waitFor()
    await pending.getByRole('cell', { name: 'Pending' }).waitFor()
    assert.equal(await page.getByTestId('organization-invite-link').count(), 0)

    // The member's roles set again from their row: none.
    await row.getByRole('button', { name: `Roles of ${member.email}` }).click()
    const choice = page.getByRole('group', { name: `Organization roles of ${member.email}` })
    await choice.getByLabel('Billing').uncheck()
    await visit(page, 'console-organization-member-roles', SHOTS)
    await page.getByRole('button', { name: 'Save roles' }).click()
    await row.getByRole('cell', { name: '—' }).waitFor()
    listed = (await api(tenant, 'GET', `/organizations/${acme.id}/members`)).body.items
    assert.deepEqual(listed[0].roles, [])

    // Revoked after a confirmation: gone from the pending list, Revoked in the past ones.
    await pending.getByRole('button', { name: 'Revoke' }).click()
    await pending.getByRole('button', { name: 'Yes' }).click()
    await invitations.getByText('No pending invitations.').waitFor()
    await page.getByLabel('Show accepted, revoked and expired ones too').check()
    await pending.getByRole('cell', { name: 'Revoked' }).waitFor()
    const revoked = (await api(tenant, 'GET', `/organizations/${acme.id}/invitations`)).body.items
    assert.equal(revoked[0].status, 'Revoked')

    // Removed after a confirmation.
    await row.getByRole('button', { name: 'Remove' }).click()
    await row.getByRole('button', { name: 'No' }).click()
    assert.equal(
      (await api(tenant, 'GET', `/organizations/${acme.id}/members`)).body.items.length,
      1,
    )
    await row.getByRole('button', { name: 'Remove' }).click()
    await row.getByRole('button', { name: 'Yes' }).click()
    await page.getByText('No members yet').waitFor()
    assert.deepEqual((await api(tenant, 'GET', `/organizations/${acme.id}/members`)).body.items, [])

    // An edit: the name and the description cleared; the rest stays.
    const settings = page.locator('form.org-form')
    await settings.getByLabel('Name').fill('Acme Corp')
    await settings.getByLabel('Description (optional)').fill('')
    await settings.getByRole('button', { name: 'Save organization' }).click()
    await page.getByRole('heading', { name: 'Acme Corp', level: 2 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor()
    const saved = (await api(tenant, 'GET', `/organizations/${acme.id}`)).body.organization
    assert.equal(saved.description, null)
    assert.deepEqual(saved.jit, { emailDomains: ['acme.example'], roles: ['Billing'] })
    assert.equal(saved.mfaRequired, true)
    // Initech's domain again: refused at the field, nothing changed.
    const editDomains = settings.getByLabel('Email domains')
    await editDomains.fill('initech.example')
    await unchanged(server, tenant.tenantId, async () => {
      await settings.getByRole('button', { name: 'Save organization' }).click()
      await settings.locator('.field-error').waitFor()
    })
    await flagged(editDomains, /already claims/)

    // The list: both, with their members and domains.
    await page.getByRole('link', { name: 'All organizations' }).click()
    await page.getByRole('link', { name: 'Acme Corp' }).waitFor()
    await page.getByRole('row', { name: /Initech.*initech\.example/ }).waitFor()
    await visit(page, 'console-organizations', SHOTS)

    // Deleted after a confirmation, back at the list.
    await page.getByRole('link', { name: 'Acme Corp' }).click()
    await page.getByRole('button', { name: 'Delete organization' }).click()
    await page.getByRole('button', { name: 'Yes' }).click()
    await page.getByRole('heading', { name: 'New organization', level: 2 }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'Acme Corp' }).count(), 0)
    assert.equal((await api(tenant, 'GET', `/organizations/${acme.id}`)).status, 404)
  } finally {
    await context.close()
  }
})

test('console organizations: the list pages by Load more', { skip }, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella' })
  for (let n = 1; n <= 51; n++) {
    const made = await api(tenant, 'POST', '/organizations', {
      name: `Org ${String(n).padStart(2, '0')}`,
    })
    assert.equal(made.status, 200, JSON.stringify(made.body))
  }
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.goto(`${server.url}/console/#organizations`)
    const list = page.getByRole('table', { name: 'Organizations' })
    await list.getByRole('link', { name: 'Org 50' }).waitFor()
    assert.equal(await list.getByRole('link', { name: 'Org 51' }).count(), 0)
    await page.getByRole('button', { name: 'Load more' }).click()
    await list.getByRole('link', { name: 'Org 51' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0)
  } finally {
    await context.close()
  }
})
