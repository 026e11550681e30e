// The console's Social sign-in page (CONTRACT §19) in Chromium against the real app, as an
// admin uses it: bad input shown at the field the API names (oidc without an issuer or with
// one that is no URL, GitHub Enterprise Server's endpoints in part, an order out of range),
// nothing changed; GitHub added through the picker and its form, its callback URL copied;
// an edit keeps the secret unless a new one is typed, and clears GitHub Enterprise Server's
// endpoints once emptied; disable; the list in the buttons' order; delete after
// confirmation; no such page for a Member, whom the API refuses; "Test this connection" in
// a new tab, to a GitHub stand-in (test/fixtures/social.ts) and back
// signed in. The API's state is read over HTTP after each step; every view axe-clean, no
// wider than a phone, photographed at both widths (SCREENSHOT_DIR, else
// test-results/screenshots/). Needs /usr/bin/chromium; skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { and, eq } from '../../src/db/orm.ts'
import { socialConnections } from '../../src/db/schema.ts'
import { PRESETS, SOCIAL_PROVIDERS } from '../../src/modules/federation/social/presets.ts'
import { unchanged } from '../db.ts'
import { expectError } from '../envelope.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, copied, flagged, VIEWPORTS, visit } from '../fixtures/console.ts'
import { type GitHubStandIn, startGitHubStandIn } from '../fixtures/social.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const SHOTS = process.env.SCREENSHOT_DIR ?? RESULT_SHOTS

let server: TestServer
let browser: Browser
let github: GitHubStandIn
/** PUBLIC_URL: Chromium resolves auth.test to the test server. */
const origin = 'http://auth.test'

before(async (ctx) => {
  if (skip) return
  // The GitHub stand-in is on loopback over http: the egress rule lets the service reach it
  // only so, and the API takes an http endpoint only so.
  server = await startTestServer(ctx, { webhookAllowPrivate: true })
  github = await startGitHubStandIn()
  browser = await launchChromium(new URL(server.url).port)
  mkdirSync(SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
  await github?.close()
})

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

/** The connections as the API lists them. */
async function listed(tenant: TenantFixture) {
  const res = await getJson(tenant, '/social-connections')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items as Record<string, any>[]
}

/** The sealed client secret as stored: equal before and after means it was kept. */
async function sealedSecret(tenant: TenantFixture, id: string): Promise<string | null> {
  const [row] = await server.deps.db
    .select({ enc: socialConnections.clientSecretEnc })
    .from(socialConnections)
    .where(and(eq(socialConnections.tenantId, tenant.tenantId), eq(socialConnections.id, id)))
  return row?.enc ?? null
}

/** Opens the form of `provider` from the list's "Add a provider". */
async function choose(page: Page, provider: string): Promise<void> {
  await page
    .getByRole('list', { name: 'Add a provider' })
    .getByRole('link', { name: new RegExp(`^${provider}`) })
    .click()
  await page.getByRole('heading', { name: `Add ${provider}`, level: 2 }).waitFor()
}

async function openSocial(page: Page): Promise<void> {
  await page
    .getByRole('navigation', { name: 'Console' })
    .getByRole('link', { name: 'Social sign-in', exact: true })
    .click()
  await page.getByRole('heading', { name: 'Social sign-in', level: 1 }).waitFor()
}

test('console social sign-in: bad input shown at the field the API names and nothing changed; GitHub added through the picker shows its callback URL, copied; an edit keeps the secret unless a new one is typed; disable; the list in the buttons’ order; delete after confirmation; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await openSocial(page)
    await page.getByText('No social connections yet').waitFor()
    const picker = page.getByRole('list', { name: 'Add a provider' })
    // Every provider the API takes, by the service's own names, in its order.
    assert.deepEqual(
      await picker.locator('.provider-name').allTextContents(),
      SOCIAL_PROVIDERS.map((p) => PRESETS[p].label),
    )
    await visit(page, 'console-social-empty', SHOTS)

    // OpenID Connect without its issuer: the message at the issuer; nothing changed.
    await choose(page, 'OpenID Connect')
    const issuer = page.getByLabel('Issuer URL')
    await page.getByLabel('Client ID').fill('initech-oidc')
    await page.getByLabel('Client secret').fill('oidc-secret-value')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Add connection' }).click()
      await page.locator('.field-error').first().waitFor()
    })
    await flagged(issuer, 'Required.')
    assert.equal(await page.getByLabel('Client ID').getAttribute('aria-invalid'), null)
    assert.equal(await page.getByLabel('Client secret').getAttribute('aria-invalid'), null)
    await visit(page, 'console-social-form-invalid', SHOTS)
    // An issuer that is no URL: the service's own check, at the same field.
    await issuer.fill('login.initech.example')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Add connection' }).click()
      await page.getByText('not an absolute URL').waitFor()
    })
    await flagged(issuer, 'not an absolute URL')
    assert.deepEqual(await listed(tenant), [])

    // The generic OAuth 2.0 provider's form has its endpoints and profile paths.
    await page.getByRole('link', { name: 'All connections and providers' }).click()
    await choose(page, 'OAuth 2.0')
    for (const label of ['Authorization URL', 'Token URL', 'Userinfo URL', 'ID path']) {
      await page.getByLabel(label, { exact: true }).waitFor()
    }
    assert.equal(await page.getByLabel('Issuer URL').count(), 0)
    await visit(page, 'console-social-form-oauth2', SHOTS)

    // GitHub: no issuer, and GitHub Enterprise Server's three endpoints as a group.
    await page.getByRole('link', { name: 'All connections and providers' }).click()
    await choose(page, 'GitHub')
    assert.equal(await page.getByLabel(/Issuer|GitLab/).count(), 0)
    assert.equal(await page.getByLabel('Userinfo URL').count(), 0)
    const client = github.addClient()
    await page.getByLabel('Client ID').fill(client.clientId)
    await page.getByLabel('Client secret').fill(client.clientSecret)
    await page.getByLabel('Authorization URL').fill(github.endpoints.authorizationUrl)
    await page.getByLabel('Order').fill('2')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Add connection' }).click()
      await page.locator('.field-error').first().waitFor()
    })
    await flagged(page.getByLabel('Token URL'), 'Required.')
    await flagged(page.getByLabel('API URL'), 'Required.')
    assert.equal(await page.getByLabel('Authorization URL').getAttribute('aria-invalid'), null)
    await visit(page, 'console-social-form-github', SHOTS)
    await page.getByLabel('Token URL').fill(github.endpoints.tokenUrl)
    await page.getByLabel('API URL').fill(github.endpoints.apiUrl)
    await page.getByRole('button', { name: 'Add connection' }).click()

    // Added: its page shows the callback URL to register at GitHub.
    await page.getByRole('heading', { name: 'GitHub', level: 2, exact: true }).waitFor()
    const [made] = await listed(tenant)
    assert.equal(made.provider, 'github')
    assert.equal(made.name, 'GitHub', 'the provider’s name by default')
    assert.equal(made.clientId, client.clientId)
    assert.equal(made.hasClientSecret, true)
    assert.equal(made.order, 2)
    assert.equal(made.enabled, true)
    assert.equal(made.allowSignUp, true)
    assert.equal(made.linkByVerifiedEmail, true)
    assert.deepEqual(made.scopes, ['read:user', 'user:email'])
    assert.deepEqual(made.endpoints, github.endpoints)
    assert.equal(made.issuer, null)
    assert.equal(made.callbackUrl, `${origin}/v1/${tenant.slug}/social/${made.id}/callback`)
    assert.equal(await copied(page, 'Copy Callback URL'), made.callbackUrl)
    assert.ok(!(await page.content()).includes(client.clientSecret))
    const testLink = page.getByRole('link', { name: /^Test this connection/ })
    assert.equal(await testLink.getAttribute('href'), `/t/${tenant.slug}/social/${made.id}`)
    assert.equal(await testLink.getAttribute('target'), '_blank')
    await page.getByText(/Test this connection opens a new tab that goes to GitHub/).waitFor()
    await visit(page, 'console-social-github', SHOTS)

    // An edit without a secret keeps the stored one; a new secret replaces it.
    const sealed = await sealedSecret(tenant, made.id)
    await page.getByLabel('Name', { exact: true }).fill('GitHub (Initech)')
    await page.getByLabel('Scopes (optional)').fill('read:user user:email read:org')
    await page.getByLabel('Order').fill('1')
    await page.getByLabel(/^Allow sign-up/).uncheck()
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('Saved.').waitFor()
    await page.getByRole('heading', { name: 'GitHub (Initech)', level: 2, exact: true }).waitFor()
    const edited = (await getJson(tenant, `/social-connections/${made.id}`)).body.connection
    assert.deepEqual(edited.scopes, ['read:user', 'user:email', 'read:org'])
    assert.equal(edited.order, 1)
    assert.equal(edited.allowSignUp, false)
    assert.equal(edited.linkByVerifiedEmail, true, 'untouched settings stay')
    assert.deepEqual(edited.endpoints, github.endpoints)
    assert.equal(await sealedSecret(tenant, made.id), sealed, 'the secret was kept')
    await page.getByLabel('Client secret').fill(client.clientSecret.split('').reverse().join(''))
    await page.getByRole('button', { name: 'Save connection' }).click()
    // The form starts afresh from the saved record: the secret field is empty again.
    await page.waitForFunction(
      () => (document.querySelector('input[type=password]') as HTMLInputElement)?.value === '',
    )
    await page.getByText('Saved.').waitFor()
    assert.notEqual(await sealedSecret(tenant, made.id), sealed, 'a new secret replaced it')

    // GitHub Enterprise Server's endpoints emptied: cleared (null), github.com again.
    await page.getByText(/Empty all three to sign in with github\.com again/).waitFor()
    for (const label of ['Authorization URL', 'Token URL', 'API URL']) {
      await page.getByLabel(label, { exact: true }).fill('')
    }
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText(/^Empty for github\.com/).waitFor()
    const cleared = (await getJson(tenant, `/social-connections/${made.id}`)).body.connection
    assert.equal(cleared.endpoints, null)
    assert.equal(cleared.name, 'GitHub (Initech)', 'nothing else changed')

    // An order out of range: the message at the order; nothing changed.
    const order = page.getByLabel('Order')
    await order.fill('5000')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Save connection' }).click()
      await page.locator('.field-error').waitFor()
    })
    await flagged(order, /1000/)
    assert.equal((await getJson(tenant, `/social-connections/${made.id}`)).body.connection.order, 1)
    await order.fill('1')

    // Disable: no test to run; the API says so.
    await page.getByRole('button', { name: 'Disable', exact: true }).click()
    await page.getByRole('button', { name: 'Enable', exact: true }).waitFor()
    assert.equal(await testLink.count(), 0, 'a disabled connection has nothing to test')
    await page.getByText('A disabled connection signs nobody in').waitFor()
    assert.equal(
      (await getJson(tenant, `/social-connections/${made.id}`)).body.connection.enabled,
      false,
    )

    // Google, order 0: the list puts it first, as the sign-in page's buttons go.
    await page.getByRole('link', { name: 'All connections' }).click()
    await choose(page, 'Google')
    assert.equal(await page.getByLabel(/Issuer|URL/).count(), 0, 'Google takes no URL')
    await page.getByLabel('Client ID').fill('1234.apps.googleusercontent.com')
    await page.getByLabel('Client secret').fill('google-secret-value')
    await page.getByLabel('Order').fill('0')
    await page.getByRole('button', { name: 'Add connection' }).click()
    await page.getByRole('heading', { name: 'Google', level: 2, exact: true }).waitFor()
    await page.getByRole('link', { name: 'All connections' }).click()
    const table = page.getByRole('table', { name: 'Social connections' })
    await table.getByRole('row').filter({ hasText: 'Google' }).waitFor()
    const rows = table.getByRole('row').filter({ has: page.getByRole('cell') })
    assert.deepEqual(await rows.nth(0).getByRole('cell').allTextContents(), [
      'Google',
      'Google',
      'Yes',
      '0',
    ])
    assert.deepEqual(await rows.nth(1).getByRole('cell').allTextContents(), [
      'GitHub (Initech)',
      'GitHub',
      'No',
      '1',
    ])
    assert.deepEqual(
      (await listed(tenant)).map((c) => [c.name, c.enabled, c.order]),
      [
        ['GitHub (Initech)', false, 1],
        ['Google', true, 0],
      ],
      'the API lists them oldest first',
    )
    await visit(page, 'console-social-list', SHOTS)

    // Delete GitHub after confirming; No first changes nothing.
    await page.getByRole('link', { name: 'GitHub (Initech)' }).click()
    await page.getByRole('button', { name: 'Delete connection' }).click()
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'No', exact: true }).click()
    })
    await page.getByRole('button', { name: 'Delete connection' }).click()
    await page.getByRole('button', { name: 'Yes', exact: true }).click()
    await page.getByRole('link', { name: 'Google', exact: true }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'GitHub (Initech)' }).count(), 0)
    assert.equal((await getJson(tenant, `/social-connections/${made.id}`)).status, 404)
    assert.deepEqual(
      (await listed(tenant)).map((c) => c.name),
      ['Google'],
    )
  } finally {
    await context.close()
  }
})

test('console social sign-in: a Member cannot sign in to the console, one whose role holds other permissions sees no Social sign-in (not even by its address), and the API refuses both', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initrode' })
  const call = async (method: string, path: string, body: unknown) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, {
      token: tenant.admin.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  await call('POST', '/social-connections', {
    provider: 'google',
    clientId: 'initrode.apps.googleusercontent.com',
    clientSecret: 'a-secret',
  })
  const plain = await signup(server, tenant.slug)
  const reader = await signup(server, tenant.slug)
  await call('POST', '/roles', { name: 'Support', permissions: ['users:read'] })
  await call('PUT', `/users/${reader.user.id}/roles`, { roles: ['Support'] })
  // A Member holds no permission; the role's holder holds one, not connections:write.
  for (const [member, reason] of [
    [plain, 'admin_required'],
    [reader, 'permission_required'],
  ] as const) {
    const res = await server.request('GET', `/v1/${tenant.slug}/social-connections`, undefined, {
      token: member.accessToken,
    })
    expectError(res, 403, reason)
  }

  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  try {
    const page = await context.newPage()
    const signIn = async (email: string) => {
      await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
      await page.getByLabel('Email address').fill(email)
      await page.getByLabel('Password').fill(STRONG_PASSWORD)
      await page.getByRole('button', { name: 'Sign in' }).click()
    }
    await signIn(plain.email)
    await page.getByText('This console is for administrators of the workspace.').waitFor()

    await signIn(reader.email)
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    const nav = page.getByRole('navigation', { name: 'Console' })
    assert.equal(await nav.getByRole('link', { name: 'Social sign-in' }).count(), 0)
    await page.goto(`${server.url}/console/#social`)
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    assert.equal(await page.getByRole('heading', { name: 'Social sign-in' }).count(), 0)
  } finally {
    await context.close()
  }
})

test('console social sign-in: "Test this connection" opens the round trip in a new tab: to GitHub and back, signed in to the hosted pages as the GitHub user', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella' })
  // At PUBLIC_URL, where GitHub sends the browser back: the cookie of the start page must
  // come back to the callback.
  const { context, page } = await consoleOf(browser, origin, tenant, { clipboard: false })
  try {
    await openSocial(page)
    await choose(page, 'GitHub')
    const client = github.addClient()
    await page.getByLabel('Client ID').fill(client.clientId)
    await page.getByLabel('Client secret').fill(client.clientSecret)
    await page.getByLabel('Authorization URL').fill(github.endpoints.authorizationUrl)
    await page.getByLabel('Token URL').fill(github.endpoints.tokenUrl)
    await page.getByLabel('API URL').fill(github.endpoints.apiUrl)
    await page.getByRole('button', { name: 'Add connection' }).click()
    await page.getByRole('heading', { name: 'GitHub', level: 2, exact: true }).waitFor()
    const [{ id: connectionId }] = await listed(tenant)

    // GitHub's stand-in signs in whoever it is told to, as a browser's visit would.
    const email = `octo-${Date.now().toString(36)}@umbrella.example`
    github.nextAccount = {
      id: Date.now(),
      login: 'octo',
      name: 'Octo Cat',
      emails: [{ email, primary: true, verified: true }],
    }
    const toGitHub: string[] = []
    context.on('request', (request) => {
      if (request.url().startsWith(github.endpoints.authorizationUrl)) toGitHub.push(request.url())
    })
    const [tab] = await Promise.all([
      context.waitForEvent('page'),
      page.getByRole('link', { name: /^Test this connection/ }).click(),
    ])
    await tab.waitForURL(`${origin}/t/${tenant.slug}/account`)
    await tab.getByText(email).first().waitFor()
    const asked = new URL(toGitHub[0] ?? 'http://none.invalid')
    assert.equal(asked.searchParams.get('client_id'), client.clientId)
    assert.equal(
      asked.searchParams.get('redirect_uri'),
      `${origin}/v1/${tenant.slug}/social/${connectionId}/callback`,
    )
    const logins = (await getJson(tenant, '/audit?action=UserLogin')).body.items
    assert.ok(
      logins.some(
        (e: { metadata: Record<string, unknown> }) =>
          e.metadata.method === 'social' && e.metadata.connectionId === connectionId,
      ),
      JSON.stringify(logins),
    )

    // The admin's console is still signed in beside it.
    await page.getByRole('link', { name: 'All connections' }).click()
    await page.getByRole('link', { name: 'GitHub', exact: true }).waitFor()
  } finally {
    await context.close()
  }
})
