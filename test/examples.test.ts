// The examples in examples/ (CONTRACT §23), each run as its README says, as a process of its
// own against a live service reached at http://localhost:<port> (its PUBLIC_URL): the
// Express site with express-openid-connect and the single-page application with
// oidc-client-ts signed in to by Debian's Chromium on the tenant's hosted page, the API
// verifying tokens with jose, and the machine client getting one by client credentials.
// The Next.js application is test/examples-nextjs.test.ts (it has a build of its own).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { before, type TestContext, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { inFreshBrowser, chromiumSkip as skip } from './fixtures/browser.ts'
import { exampleTenant, runExample, serveExample } from './fixtures/examples.ts'
import {
  createApiResource,
  createApplication,
  issuerOf,
  signInOnSignInPage,
} from './fixtures/oidc.ts'
import { freePort } from './fixtures/ports.ts'
import { launchChromium } from './fixtures/secure-origin.ts'
import { createTenant, type TenantFixture, type TestServer } from './helpers.ts'

const AUDIENCE = 'https://reports.example.com'

let server: TestServer
let t: TenantFixture
let issuer: string
let user: { email: string; password: string; userId: string }
let browser: Browser

before(async (ctx) => {
  ;({ server, t, issuer, user } = await exampleTenant(ctx as TestContext))
  if (!skip) browser = await launchChromium(ctx as TestContext)
})

const run = (ctx: TestContext, file: string, env: Record<string, string>) =>
  runExample(ctx, [file], env)
const serve = (ctx: TestContext, file: string, env: Record<string, string>, port: number) =>
  serveExample(ctx, [file], env, port)

async function machineSetUp() {
  await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Reports',
    identifier: AUDIENCE,
    scopes: [{ name: 'reports:read' }, { name: 'reports:write' }],
  })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Nightly job',
    type: 'machine',
    allowedScopes: ['reports:read', 'reports:write'],
  })
  return { clientId: made.application.clientId, clientSecret: String(made.clientSecret) }
}

test('examples/api-jose and examples/machine-client: the machine gets a token by client credentials and the API accepts it; the API refuses a missing, a foreign and an under-scoped token', async (ctx) => {
  const machine = await machineSetUp()
  const port = await freePort()
  const apiUrl = `http://127.0.0.1:${port}/reports`
  await serve(ctx, 'api-jose/server.ts', { ISSUER: issuer, AUDIENCE, PORT: String(port) }, port)

  const client = run(ctx, 'machine-client/client.ts', {
    ISSUER: issuer,
    CLIENT_ID: machine.clientId,
    CLIENT_SECRET: machine.clientSecret,
    RESOURCE: AUDIENCE,
    API_URL: apiUrl,
  })
  const [code] = await once(client.child, 'exit')
  assert.equal(code, 0, client.output())
  assert.match(client.output(), /scope "reports:read"/)
  const answer = /GET \S+: 200 (.*)/.exec(client.output())
  assert.ok(answer, client.output())
  assert.deepEqual(JSON.parse(answer[1]), {
    reports: [{ id: 1, title: 'Quarterly' }],
    client: machine.clientId,
    sub: machine.clientId,
  })

  // Without a token, with one of another tenant's issuer, and with the wrong scope.
  const none = await fetch(apiUrl)
  assert.equal(none.status, 401)
  assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="reports"')
  const other = await createTenant(server)
  await createApiResource(server, other.slug, other.admin.accessToken, {
    name: 'Reports',
    identifier: AUDIENCE,
    scopes: [{ name: 'reports:read' }],
  })
  const foreignApp = await createApplication(server, other.slug, other.admin.accessToken, {
    name: 'Foreign job',
    type: 'machine',
    allowedScopes: ['reports:read'],
  })
  const foreign = await tokenFor(
    other.slug,
    foreignApp.application.clientId,
    String(foreignApp.clientSecret),
    'reports:read',
  )
  const refused = await fetch(apiUrl, { headers: { authorization: `Bearer ${foreign}` } })
  assert.equal(refused.status, 401, 'same keys, another issuer: only the iss check refuses it')
  assert.equal((await refused.json()).reason, 'ERR_JWT_CLAIM_VALIDATION_FAILED')
  const writeOnly = await tokenFor(t.slug, machine.clientId, machine.clientSecret, 'reports:write')
  const forbidden = await fetch(apiUrl, { headers: { authorization: `Bearer ${writeOnly}` } })
  assert.equal(forbidden.status, 403)
})

async function tokenFor(slug: string, clientId: string, secret: string, scope: string) {
  const res = await fetch(`${issuerOf(server, slug)}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope, resource: AUDIENCE }),
  })
  assert.equal(res.status, 200, await res.clone().text())
  return (await res.json()).access_token as string
}

test('examples/express-openid-connect: the site signs the person in on the hosted page, knows the address from the ID token, and signs out at the provider too', {
  skip,
}, async (ctx) => {
  const port = await freePort()
  const site = `http://localhost:${port}`
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Express site',
    type: 'web',
    redirectUris: [`${site}/callback`],
    postLogoutRedirectUris: [site],
  })
  await serve(
    ctx,
    'express-openid-connect/app.ts',
    {
      ISSUER: issuer,
      CLIENT_ID: made.application.clientId,
      CLIENT_SECRET: String(made.clientSecret),
      BASE_URL: site,
      SESSION_SECRET: randomBytes(32).toString('hex'),
    },
    port,
  )
  await inFreshBrowser(browser, async (page) => {
    await page.goto(site)
    assert.equal(await page.locator('#who').textContent(), 'Not signed in')
    await page.getByRole('link', { name: 'Sign in' }).click()
    await signInOnSignInPage(page, t.slug, user)
    await page.waitForURL(`${site}/`)
    assert.equal(await page.locator('#who').textContent(), `Signed in as ${user.email}`)
    await page.goto(`${site}/profile`)
    const claims = JSON.parse((await page.locator('body').textContent()) ?? '{}')
    assert.equal(claims.sub, user.userId)
    assert.equal(claims.email, user.email)

    await page.goto(site)
    await page.getByRole('link', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign out', exact: true }).click()
    await page.waitForURL(`${site}/`)
    assert.equal(await page.locator('#who').textContent(), 'Not signed in')
    // The provider's session ended too: the next sign-in asks for the password again.
    await page.getByRole('link', { name: 'Sign in' }).click()
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/sign-in`)
  })
})

test('examples/spa-oidc-client-ts: the single-page application signs in by code + PKCE without a secret and shows the claims; another origin is not a registered redirect', {
  skip,
}, async (ctx) => {
  const port = await freePort()
  const origin = `http://localhost:${port}`
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Gadget Planner',
    type: 'spa',
    redirectUris: [`${origin}/`],
    postLogoutRedirectUris: [`${origin}/`],
  })
  assert.equal(made.clientSecret, undefined, 'a spa is a public client')
  const env = { ISSUER: issuer, CLIENT_ID: made.application.clientId, PORT: String(port) }
  await serve(ctx, 'spa-oidc-client-ts/serve.ts', env, port)
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`${origin}/`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await signInOnSignInPage(page, t.slug, user)
    await page.waitForURL(`${origin}/`)
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor()
    assert.equal(await page.locator('#who').textContent(), `Signed in as ${user.email}`)
    const claims = JSON.parse((await page.locator('#claims').textContent()) ?? '{}')
    assert.equal(claims.sub, user.userId)
    assert.equal(claims.iss, issuer)
  })

  // The same application served from a port it did not register: the provider refuses to
  // send the code there, and the page says nothing about being signed in.
  const stray = await freePort()
  await serve(ctx, 'spa-oidc-client-ts/serve.ts', { ...env, PORT: String(stray) }, stray)
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`http://localhost:${stray}/`)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(
      (url) =>
        url.pathname.startsWith(`/oidc/${t.slug}`) || url.pathname.startsWith(`/t/${t.slug}`),
    )
    assert.match((await page.locator('body').textContent()) ?? '', /redirect_uri/)
  })
})
