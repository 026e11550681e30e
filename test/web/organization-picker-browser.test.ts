// The hosted pages' organization picker (CONTRACT §18, Provider) in Debian's Chromium, with
// openid-client as the application: `prompt=select_organization` shows the user's
// organizations of this tenant (never another tenant's), each a button with the roles held
// there; choosing one comes back to the application with a code whose access token carries
// that organization's org_id, org_roles and scopes. Cancel, and a user in no organization,
// go back with access_denied and nothing issued. An organization with mfaRequired asks a
// session without a second factor for the authenticator's code first. The pages are checked
// with axe and photographed at 1280 and 390 px.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { and, eq, inArray } from '../../src/db/orm.ts'
import { oidcModels } from '../../src/db/schema.ts'
import {
  checkAccessibility,
  inFreshBrowser,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { enrolTotp, totpAt } from '../fixtures/mfa.ts'
import {
  createApiResource,
  createApplication,
  oidcClient,
  signInOnSignInPage,
} from '../fixtures/oidc.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const ORDERS = 'https://orders.example.com/api'

let server: TestServer
let browser: Browser
let t: TenantFixture
let other: TenantFixture
let callback: Server
let callbackUrl: string
const received: URL[] = []
let config: client.Configuration

const admin =
  (tenant = t) =>
  async (method: string, path: string, body?: unknown) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, {
      token: tenant.admin.accessToken,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  t = await createTenant(server, { name: 'Acme Workspace' })
  other = await createTenant(server)
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? '/', callbackUrl)
    if (url.pathname === '/callback') received.push(url)
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the application')
  })
  await new Promise<void>((done) => callback.listen(0, '127.0.0.1', done))
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`
  await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Orders API',
    identifier: ORDERS,
    scopes: [{ name: 'orders:read' }, { name: 'orders:approve', roles: ['Admin'] }],
  })
  await admin()('POST', '/roles', {
    name: 'Approver',
    kind: 'organization',
    resourceScopes: [{ resource: ORDERS, scopes: ['orders:approve'] }],
  })
  await admin()('POST', '/roles', { name: 'Viewer', kind: 'organization' })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Order Desk',
    type: 'web',
    redirectUris: [callbackUrl],
  })
  config = await oidcClient(server, t.slug, made.application.clientId, String(made.clientSecret))
  browser = await launchChromium(new URL(server.url).port)
})

after(async () => {
  if (skip) return
  await browser?.close()
  await new Promise((done) => callback?.close(done))
})

interface Started {
  url: string
  verifier: string
  nonce: string
  state: string
}

async function start(extra: Record<string, string> = {}): Promise<Started> {
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callbackUrl,
    scope: 'openid offline_access orders:read orders:approve',
    resource: ORDERS,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
    ...extra,
  })
  return {
    url: url.href.replace(server.url, server.deps.config.publicUrl),
    verifier,
    nonce,
    state,
  }
}

async function backAtApplication(page: Page): Promise<URL> {
  await page.waitForURL((url) => url.href.startsWith(callbackUrl))
  const url = received.at(-1)
  assert.ok(url, 'the callback received nothing')
  return url
}

const exchange = (started: Started, at: URL) =>
  client.authorizationCodeGrant(config, at, {
    pkceCodeVerifier: started.verifier,
    expectedNonce: started.nonce,
    expectedState: started.state,
    idTokenExpected: true,
  })

const organization = async (name: string, tenant = t, body: Record<string, unknown> = {}) =>
  (await admin(tenant)('POST', '/organizations', { name, ...body })).organization as { id: string }

const join = (orgId: string, userId: string, roles: string[] = [], tenant = t) =>
  admin(tenant)('PUT', `/organizations/${orgId}/members/${userId}`, { roles })

/** The tenant's grants, codes and tokens. */
const issued = () =>
  server.deps.db
    .select({ id: oidcModels.id })
    .from(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, t.tenantId),
        inArray(oidcModels.model, ['Grant', 'AuthorizationCode', 'AccessToken', 'RefreshToken']),
      ),
    )

test('prompt=select_organization: the picker lists the user’s organizations of this tenant; the one chosen is the access token’s', {
  skip,
}, async () => {
  const north = await organization(`Northwind ${t.slug}`)
  const south = await organization(`Southwind ${t.slug}`)
  await organization(`Westwind ${t.slug}`)
  const who = await signup(server, t.slug)
  await join(north.id, who.user.id, ['Approver', 'Viewer'])
  await join(south.id, who.user.id)
  // The same address in another tenant is another account, member of that tenant's own.
  const theirs = await organization(`Elsewhere ${t.slug}`, other)
  const twin = await signup(server, other.slug, who.email)
  await join(theirs.id, twin.user.id, [], other)

  await inFreshBrowser(browser, async (page) => {
    const started = await start({ prompt: 'select_organization' })
    await page.goto(started.url)
    await signInOnSignInPage(page, t.slug, who)
    await page.getByRole('heading', { name: 'Choose an organization' }).waitFor()
    const main = (await page.locator('main').textContent()) ?? ''
    assert.match(main, /Order Desk asks which of your organizations in Acme Workspace to use/)
    const choices = page.locator('.choices button')
    assert.deepEqual(
      (await choices.allTextContents()).map((s) => s.replace(/\s+/g, ' ').trim()),
      [`Northwind ${t.slug}Roles: Approver, Viewer`, `Southwind ${t.slug}`],
    )
    assert.doesNotMatch(main, /Westwind|Elsewhere/)
    await checkAccessibility(page, 'organization-picker')
    await screenshots(page, 'organization-picker')

    await page.getByRole('button', { name: new RegExp(`^Northwind ${t.slug}`) }).click()
    const at = await backAtApplication(page)
    const tokens = await exchange(started, at)
    const access = decodeJwt(tokens.access_token)
    assert.equal(access.org_id, north.id)
    assert.deepEqual(access.org_roles, ['Approver', 'Viewer'])
    assert.equal(access.scope, 'orders:approve')

    // Asked again, the picker comes back (the provider session is reused, no sign-in):
    // Southwind holds no role that lists a scope, so its token has none.
    const next = await start({ prompt: 'select_organization' })
    await page.goto(next.url)
    await page.getByRole('button', { name: `Southwind ${t.slug}` }).click()
    const inSouth = decodeJwt((await exchange(next, await backAtApplication(page))).access_token)
    assert.equal(inSouth.org_id, south.id)
    assert.deepEqual(inSouth.org_roles, [])
    assert.equal(inSouth.scope, undefined)

    // Cancel: back to the application with access_denied, nothing issued.
    const cancelled = await start({ prompt: 'select_organization' })
    await page.goto(cancelled.url)
    await page.getByRole('heading', { name: 'Choose an organization' }).waitFor()
    const before = await issued()
    await page.getByRole('button', { name: 'Cancel' }).click()
    const back = await backAtApplication(page)
    assert.equal(back.searchParams.get('error'), 'access_denied')
    assert.equal(back.searchParams.get('state'), cancelled.state)
    assert.deepEqual(await issued(), before)
  })
})

test('the picker of someone in no organization says so in their language; Cancel answers access_denied', {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/sign-in`)
    await signInOnSignInPage(page, t.slug, who)
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
    const started = await start({ prompt: 'select_organization', ui_locales: 'de' })
    await page.goto(started.url)
    await page.getByRole('heading', { name: 'Organisation auswählen' }).waitFor()
    assert.match(
      (await page.locator('main').textContent()) ?? '',
      /Sie sind in keiner Organisation von Acme Workspace Mitglied, daher kann Order Desk nicht fortfahren/,
    )
    await checkAccessibility(page, 'organization-picker-none')
    await screenshots(page, 'organization-picker-none-de')
    await page.getByRole('button', { name: 'Abbrechen' }).click()
    const back = await backAtApplication(page)
    assert.equal(back.searchParams.get('error'), 'access_denied')
  })
})

test('an organization with mfaRequired: the hosted page asks a session without a second factor for the authenticator’s code, then the organization token is issued', {
  skip,
}, async () => {
  await admin()('PATCH', '/tenant', { mfaPolicy: 'Optional' })
  const vault = await organization(`Vault ${t.slug}`, t, { mfaRequired: true })
  const who = await signup(server, t.slug)
  await join(vault.id, who.user.id, ['Approver'])
  await inFreshBrowser(browser, async (page) => {
    // Signed in before the authenticator app was set up: the session proved no second factor.
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/sign-in`)
    await signInOnSignInPage(page, t.slug, who)
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
    const secret = await enrolTotp(server, t.slug, who.accessToken)

    const started = await start({ prompt: 'select_organization' })
    await page.goto(started.url)
    await page.getByRole('button', { name: new RegExp(`^Vault ${t.slug}`) }).click()
    await page.getByRole('heading', { name: 'Confirm it is you with a second factor' }).waitFor()
    assert.match(
      (await page.locator('main').textContent()) ?? '',
      new RegExp(
        `Vault ${t.slug} asks for a second factor before Order Desk may use your account there`,
      ),
    )
    await checkAccessibility(page, 'organization-second-factor')
    await screenshots(page, 'organization-second-factor')
    await page.getByLabel('Code from your authenticator app').fill(totpAt(server, secret))
    await page.getByRole('button', { name: 'Continue', exact: true }).click()
    const tokens = await exchange(started, await backAtApplication(page))
    assert.equal(decodeJwt(tokens.access_token).org_id, vault.id)
    assert.equal(decodeJwt(tokens.access_token).scope, 'orders:approve')
  })
})

test('another user signed in on the hosted pages since: the organization asked for is checked as the page’s user, not the earlier provider session’s', {
  skip,
}, async () => {
  const org = await organization(`Harbour ${t.slug}`)
  const first = await signup(server, t.slug)
  const second = await signup(server, t.slug)
  await join(org.id, second.user.id, ['Approver'])
  await inFreshBrowser(browser, async (page) => {
    // The first user (no member) signs the provider in through the application.
    const plain = await start()
    await page.goto(plain.url)
    await signInOnSignInPage(page, t.slug, first)
    assert.equal(
      (await exchange(plain, await backAtApplication(page))).claims()?.sub,
      first.user.id,
    )
    // The second signs in on the hosted pages; the application asks for the organization.
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/sign-in`)
    await signInOnSignInPage(page, t.slug, second)
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
    const started = await start({ organization_id: org.id })
    await page.goto(started.url)
    const tokens = await exchange(started, await backAtApplication(page))
    assert.equal(tokens.claims()?.sub, second.user.id)
    assert.equal(decodeJwt(tokens.access_token).org_id, org.id)
  })
})
