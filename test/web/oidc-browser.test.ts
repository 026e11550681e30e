// The OpenID provider's browser flow on the hosted pages (CONTRACT §11, Sign-in, Consent,
// Tokens), with two real parties: openid-client (v6) as the application, Debian's Chromium
// as the person. The authorization code + PKCE flow from the authorization URL to the
// callback (a tiny HTTP server on 127.0.0.1 that records what it receives), the code
// exchanged and the ID token validated by openid-client, userinfo, refresh rotation; a
// live hosted session reused (single sign-on) unless prompt=login, and only while it is live
// (after a sign-out or a revocation, prompt=none answers login_required and the browser is
// asked to sign in); a third-party application's consent page, its Deny and its Allow.
//
// The tests' PUBLIC_URL is http://auth.test: Chromium resolves that host to the test server
// (--host-resolver-rules), so every cookie the browser keeps is the service's one host.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { and, eq } from '../../src/db/orm.ts'
import { auditEvents } from '../../src/db/schema.ts'
import {
  checkAccessibility,
  inFreshBrowser,
  launchChromium,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import {
  createApiResource,
  createApplication,
  issuerOf,
  oidcClient,
  serverFetch,
  signInOnSignInPage,
} from '../fixtures/oidc.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const SHOTS = '/tmp/shots'

let server: TestServer
let browser: Browser
let t: TenantFixture
let user: { email: string; password: string; userId: string }
let callback: Server
let callbackUrl: string
/** The URLs the callback server received, newest last. */
const received: URL[] = []
let firstParty: { clientId: string; clientSecret: string }
let thirdParty: { clientId: string; clientSecret: string }

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  t = await createTenant(server)
  const made = await signup(server, t.slug)
  user = { email: made.email, password: made.password, userId: made.user.id }
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? '/', callbackUrl)
    // Chromium asks for /favicon.ico too.
    if (url.pathname === '/callback') received.push(url)
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the application')
  })
  await new Promise<void>((done) => callback.listen(0, '127.0.0.1', done))
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`
  const app = async (name: string, first: boolean) => {
    const created = await createApplication(server, t.slug, t.admin.accessToken, {
      name,
      type: 'web',
      redirectUris: [callbackUrl],
      firstParty: first,
    })
    return { clientId: created.application.clientId, clientSecret: String(created.clientSecret) }
  }
  firstParty = await app('Team Notes', true)
  thirdParty = await app('Gadget Planner', false)
  browser = await launchChromium(new URL(server.url).port)
  mkdirSync(SHOTS, { recursive: true })
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
  config: client.Configuration
}

/** The application starts a sign-in: an authorization URL built by openid-client. */
async function start(
  app: { clientId: string; clientSecret?: string },
  extra: Record<string, string> = {},
): Promise<Started> {
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: callbackUrl,
    scope: 'openid email offline_access',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    state,
    ...extra,
  })
  // Discovery went through the test server's address; the browser uses the public one.
  const browserUrl = url.href.replace(server.url, server.deps.config.publicUrl)
  assert.ok(browserUrl.startsWith(`${issuerOf(server, t.slug)}/auth?`), browserUrl)
  return { url: browserUrl, verifier, nonce, state, config }
}

/** Waits for the browser to land on the application's callback. */
async function backAtApplication(page: Page): Promise<URL> {
  await page
    .waitForURL((url) => url.href.startsWith(callbackUrl))
    .catch((error) => {
      throw new Error(`not back at the application but at ${page.url()}: ${error.message}`)
    })
  const url = received.at(-1)
  assert.ok(url, 'the callback received nothing')
  return url
}

/** The application's half: the code exchanged and the ID token validated by openid-client. */
async function exchange(started: Started, at: URL) {
  return client.authorizationCodeGrant(started.config, at, {
    pkceCodeVerifier: started.verifier,
    expectedNonce: started.nonce,
    expectedState: started.state,
    idTokenExpected: true,
  })
}

async function signInWithPassword(
  page: Page,
  who: { email: string; password: string } = user,
): Promise<void> {
  await signInOnSignInPage(page, t.slug, who)
}

/** Signs `user` in on the hosted sign-in page itself: a live hosted session, no application. */
async function signInOnHostedPage(page: Page): Promise<void> {
  await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/sign-in`)
  await signInWithPassword(page)
  await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
}

test('authorization code + PKCE through the hosted sign-in page: openid-client gets a valid ID token (iss, aud, sub, nonce, amr), userinfo, and rotating refresh tokens', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const started = await start(firstParty)
    await page.goto(started.url)
    await signInWithPassword(page)
    const at = await backAtApplication(page)
    assert.equal(at.searchParams.get('iss'), issuerOf(server, t.slug))
    const tokens = await exchange(started, at)
    const claims = tokens.claims()
    assert.ok(claims)
    assert.equal(claims.iss, issuerOf(server, t.slug))
    assert.equal(claims.aud, firstParty.clientId)
    assert.equal(claims.sub, user.userId)
    assert.equal(claims.nonce, started.nonce)
    assert.deepEqual(claims.amr, ['pwd'])
    assert.equal(typeof claims.auth_time, 'number')
    // sid in every ID token, though this application has no back-channel logout URI.
    assert.equal(typeof claims.sid, 'string')
    assert.ok(claims.sid)

    const info = await client.fetchUserInfo(started.config, tokens.access_token, user.userId)
    assert.equal(info.email, user.email)

    // offline_access without prompt=consent: a first-party application gets it.
    assert.ok(tokens.refresh_token, 'a first-party application gets a refresh token')
    const refreshed = await client.refreshTokenGrant(started.config, tokens.refresh_token)
    assert.ok(refreshed.refresh_token)
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token)
    assert.equal(refreshed.claims()?.sid, claims.sid)
    // Rotation: the spent token is refused.
    await assert.rejects(
      client.refreshTokenGrant(started.config, tokens.refresh_token),
      (error: Error & { error?: string }) => error.error === 'invalid_grant',
    )
  })
})

test('single sign-on: a live hosted-page session signs in to an application without asking again', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await signInOnHostedPage(page)

    const visited: string[] = []
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) visited.push(new URL(frame.url()).pathname)
    })
    const started = await start(firstParty)
    await page.goto(started.url)
    const at = await backAtApplication(page)
    assert.ok(!visited.includes(`/t/${t.slug}/sign-in`), visited.join(' '))
    const claims = (await exchange(started, at)).claims()
    assert.equal(claims?.sub, user.userId)
    assert.deepEqual(claims?.amr, ['pwd'])

    // prompt=login asks again, although the session is live.
    const again = await signInThroughApplication(page, user, { prompt: 'login' })
    assert.equal(again.claims()?.sub, user.userId)
  })
})

test('max_age: a hosted session older than max_age is not reused; the browser signs in again', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await signInOnHostedPage(page)
    // Two minutes later on the service's clock: the session signed in 120 s ago.
    server.clock.advance(120)
    const tokens = await signInThroughApplication(page, user, { max_age: '60' })
    assert.equal(tokens.claims()?.sub, user.userId)
  })
})

test('a third-party application shows a consent page; Deny answers access_denied with iss, Allow grants and is audited', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const denied = await start(thirdParty)
    await page.goto(denied.url)
    await signInWithPassword(page)
    await page.waitForURL((url) => url.pathname.startsWith(`/t/${t.slug}/authorize/`))
    await page.getByRole('heading', { name: /Gadget Planner wants to use/ }).waitFor()
    assert.match((await page.locator('main').textContent()) ?? '', /See your email address/)
    await checkAccessibility(page, 'consent')
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 860 })
      await page.screenshot({ path: `${SHOTS}/consent-${width}.png`, fullPage: true })
    }
    await page.setViewportSize({ width: 1280, height: 860 })

    // A post without the form's CSRF field changes nothing.
    const forged = await page.evaluate(async (url) => {
      const res = await fetch(url, {
        method: 'POST',
        body: new URLSearchParams({ decision: 'allow' }),
        redirect: 'manual',
      })
      return res.status
    }, `${page.url()}/consent`)
    assert.equal(forged, 403)

    await page.getByRole('button', { name: 'Deny' }).click()
    const refused = await backAtApplication(page)
    assert.equal(refused.searchParams.get('error'), 'access_denied')
    assert.equal(refused.searchParams.get('iss'), issuerOf(server, t.slug))
    assert.equal(refused.searchParams.get('state'), denied.state)
    assert.equal(refused.searchParams.get('code'), null)

    const allowed = await start(thirdParty)
    await page.goto(allowed.url)
    // Signed in already (single sign-on): straight to the consent page.
    await page.getByRole('heading', { name: /Gadget Planner wants to use/ }).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    const at = await backAtApplication(page)
    const tokens = await exchange(allowed, at)
    assert.equal(tokens.claims()?.sub, user.userId)
    const rows = await server.deps.db
      .select()
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.tenantId, t.tenantId),
          eq(auditEvents.action, 'ApplicationConsentGranted'),
        ),
      )
    assert.equal(rows.length, 1)
    assert.equal((rows[0].metadata as { clientId: string }).clientId, thirdParty.clientId)
    assert.equal(rows[0].actorId, user.userId)
  })
})

test('a dynamically registered public client (RFC 7591, openid-client) is third-party: consent, then code + PKCE', {
  skip,
}, async () => {
  const opened = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { dynamicClientRegistration: true },
    { token: t.admin.accessToken },
  )
  assert.equal(opened.status, 200)
  const registered = await client.dynamicClientRegistration(
    new URL(issuerOf(server, t.slug)),
    {
      client_name: 'Pocket Planner',
      redirect_uris: [callbackUrl],
      token_endpoint_auth_method: 'none',
    },
    client.None(),
    { execute: [client.allowInsecureRequests], [client.customFetch]: serverFetch(server) },
  )
  const clientId = registered.clientMetadata().client_id
  await inFreshBrowser(browser, async (page) => {
    const started = await start({ clientId })
    await page.goto(started.url)
    await signInWithPassword(page)
    await page.getByRole('heading', { name: /Pocket Planner wants to use/ }).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    const tokens = await exchange(started, await backAtApplication(page))
    assert.equal(tokens.claims()?.sub, user.userId)
    assert.equal(tokens.claims()?.aud, clientId)
  })
})

test('an interaction page opened without the browser that made the request (no _interaction cookie) is refused, never signs in', {
  skip,
}, async () => {
  const started = await start(firstParty)
  const res = await fetch(started.url.replace(server.deps.config.publicUrl, server.url), {
    redirect: 'manual',
  })
  assert.equal(res.status, 303)
  const location = new URL(res.headers.get('location') ?? '', server.url)
  assert.match(location.pathname, new RegExp(`^/t/${t.slug}/authorize/[A-Za-z0-9_-]+$`))
  // Another browser: the path alone, without the interaction cookie.
  const page = await fetch(`${server.url}${location.pathname}`, { redirect: 'manual' })
  assert.equal(page.status, 400)
  assert.match(await page.text(), /This sign-in request has expired/)
  assert.ok(!(page.headers.get('set-cookie') ?? '').includes('ta_authorize'))
})

/**
 * Signs `who` in to the first-party application through the hosted sign-in page, with the
 * `extra` authorization parameters; answers the tokens the application got.
 */
async function signInThroughApplication(
  page: Page,
  who: { email: string; password: string } = user,
  extra: Record<string, string> = {},
) {
  const started = await start(firstParty, extra)
  await page.goto(started.url)
  await signInWithPassword(page, who)
  return exchange(started, await backAtApplication(page))
}

/** An authorization request with prompt=none: what the application's callback receives. */
async function silently(page: Page): Promise<{ started: Started; at: URL }> {
  const started = await start(firstParty, { prompt: 'none' })
  const count = received.length
  await page.goto(started.url)
  const at = await backAtApplication(page)
  assert.equal(received.length, count + 1)
  assert.equal(at.searchParams.get('state'), started.state)
  assert.equal(at.searchParams.get('iss'), issuerOf(server, t.slug))
  return { started, at }
}

function assertLoginRequired(at: URL): void {
  assert.equal(at.searchParams.get('error'), 'login_required', at.href)
  assert.equal(at.searchParams.get('code'), null)
}

test("single sign-on only while the hosted session is live: after the hosted pages' sign-out, prompt=none answers login_required and without prompt the browser is asked to sign in", {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const who = await signup(server, t.slug)
    await signInThroughApplication(page, who)
    // While the hosted session is live, prompt=none signs in silently.
    const live = await silently(page)
    const claims = (await exchange(live.started, live.at)).claims()
    assert.equal(claims?.sub, who.user.id)

    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/account`)
    await page.locator('form.sign-out button').click()
    await page.waitForURL((url) => !url.pathname.endsWith('/account'))

    assertLoginRequired((await silently(page)).at)

    // Without prompt: the sign-in page, no code behind the user's back.
    const count = received.length
    const started = await start(firstParty)
    await page.goto(started.url)
    await page.waitForURL((url) => url.pathname === `/t/${t.slug}/sign-in`)
    assert.equal(received.length, count)
    await signInWithPassword(page, who)
    const at = await backAtApplication(page)
    assert.equal((await exchange(started, at)).claims()?.sub, who.user.id)
    // Signed in again: single sign-on is back.
    assert.ok((await silently(page)).at.searchParams.get('code'))
  })
})

test('single sign-on only while the hosted session is live: logout-all through the API ends it (prompt=none answers login_required)', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const who = await signup(server, t.slug)
    await signInThroughApplication(page, who)
    assert.ok((await silently(page)).at.searchParams.get('code'))
    const res = await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
      token: who.accessToken,
    })
    assert.equal(res.status, 200)
    assertLoginRequired((await silently(page)).at)
  })
})

test('single sign-on only while the hosted session is live: a suspended user gets login_required from prompt=none', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const who = await signup(server, t.slug)
    await signInThroughApplication(page, who)
    assert.ok((await silently(page)).at.searchParams.get('code'))
    const res = await server.request(
      'PATCH',
      `/v1/${t.slug}/users/${who.user.id}`,
      { status: 'Suspended' },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assertLoginRequired((await silently(page)).at)
  })
})

/** Signs `who` in on the hosted sign-in page of `page`'s browser, no application asking. */
async function signInDirectly(page: Page, who: { email: string; password: string }) {
  await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/sign-in`)
  await signInWithPassword(page, who)
  await page.waitForURL((url) => url.pathname === `/t/${t.slug}/account`)
}

test("another user's sign-in on the hosted pages ends single sign-on as the earlier user: prompt=none answers login_required, and the next authorization is the page's user", {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const first = await signup(server, t.slug)
    const second = await signup(server, t.slug)
    await signInThroughApplication(page, first)
    const live = await silently(page)
    assert.equal((await exchange(live.started, live.at)).claims()?.sub, first.user.id)

    // The first user's service session is still live; only the browser's sign-in changed.
    await signInDirectly(page, second)
    assertLoginRequired((await silently(page)).at)

    const started = await start(firstParty)
    await page.goto(started.url)
    const at = await backAtApplication(page)
    assert.equal((await exchange(started, at)).claims()?.sub, second.user.id)
    const again = await silently(page)
    assert.equal((await exchange(again.started, again.at)).claims()?.sub, second.user.id)
  })
})

test('a consent page left open while another user signs in never grants as the earlier user: the sign-in goes on as the page’s user', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const first = await signup(server, t.slug)
    const second = await signup(server, t.slug)
    const started = await start(thirdParty)
    await page.goto(started.url)
    await signInWithPassword(page, first)
    const heading = page.getByRole('heading', { name: /Gadget Planner wants to use/ })
    await heading.waitFor()

    const tab = await page.context().newPage()
    await signInDirectly(tab, second)
    await tab.close()

    await page.reload()
    await heading.waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    const at = await backAtApplication(page)
    assert.equal((await exchange(started, at)).claims()?.sub, second.user.id)
    const grants = await server.deps.db
      .select()
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.tenantId, t.tenantId),
          eq(auditEvents.action, 'ApplicationConsentGranted'),
          eq(auditEvents.actorId, first.user.id),
        ),
      )
    assert.equal(grants.length, 0, 'nothing granted as the first user')
  })
})

test('max_age shorter than the sign-in takes: the sign-in made for this very request is accepted, no loop back to the sign-in page', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    // Every visit of the interaction page finds the service's clock 10 s on: the sign-in
    // made for it is older than max_age when the browser comes back.
    await page.route(`**/t/${t.slug}/authorize/**`, (route) => {
      server.clock.advance(10)
      return route.continue()
    })
    const tokens = await signInThroughApplication(page, user, { max_age: '5' })
    assert.equal(tokens.claims()?.sub, user.userId)
  })
})

/** POSTs `fields` to the token endpoint as the first-party application (HTTP Basic). */
function tokenRequest(fields: Record<string, string>) {
  const basic = Buffer.from(`${firstParty.clientId}:${firstParty.clientSecret}`).toString('base64')
  return fetch(`${server.url}/oidc/${t.slug}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams(fields),
  })
}

/**
 * Sends `count` copies of one token request at once: the statuses and OAuth errors. (On
 * PGlite, one connection, the requests rarely interleave; on PostgreSQL they do.)
 */
async function together(count: number, fields: Record<string, string>) {
  const answers = await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await tokenRequest(fields)
      const body = (await res.json()) as { error?: string; refresh_token?: string }
      return { status: res.status, ...body }
    }),
  )
  return {
    won: answers.filter((a) => a.status === 200),
    lost: answers.filter((a) => a.status !== 200),
  }
}

test('concurrent redemptions of one authorization code or one refresh token: exactly one wins, the others are invalid_grant', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const started = await start(firstParty)
    await page.goto(started.url)
    await signInWithPassword(page)
    const at = await backAtApplication(page)
    const code = await together(6, {
      grant_type: 'authorization_code',
      code: at.searchParams.get('code') ?? '',
      redirect_uri: callbackUrl,
      code_verifier: started.verifier,
    })
    assert.equal(code.won.length, 1, 'one of the redemptions of the code wins')
    assert.deepEqual(
      code.lost.map((a) => [a.status, a.error]),
      Array(5).fill([400, 'invalid_grant']),
    )

    // A refresh token of a grant of its own.
    const tokens = await signInThroughApplication(page, user, { prompt: 'login' })
    assert.ok(tokens.refresh_token)
    const refresh = await together(6, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    assert.equal(refresh.won.length, 1, 'one of the redemptions of the refresh token wins')
    assert.deepEqual(
      refresh.lost.map((a) => [a.status, a.error]),
      Array(5).fill([400, 'invalid_grant']),
    )
  })
})

test('resource scopes beyond the user’s role are left out of the grant and not asked again: the first-party application is back at once, the consent page lists only the others', {
  skip,
}, async () => {
  const api = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Notes API',
    identifier: 'https://notes.example.com/api',
    scopes: [
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:admin', description: 'Manage everyone’s notes', roles: ['Admin'] },
    ],
  })
  const asked = { resource: api.identifier, scope: 'openid notes:read notes:admin' }
  await inFreshBrowser(browser, async (page) => {
    const member = await signup(server, t.slug)
    const tokens = await signInThroughApplication(page, member, asked)
    const access = decodeJwt(tokens.access_token)
    assert.equal(access.aud, api.identifier)
    assert.equal(access.scope, 'notes:read')
    assert.equal(access.sub, member.user.id)

    const started = await start(thirdParty, asked)
    await page.goto(started.url)
    await page.getByRole('heading', { name: /Gadget Planner wants to use/ }).waitFor()
    const listed = (await page.locator('.consent-scopes').textContent()) ?? ''
    assert.match(listed, /Read your notes/)
    assert.doesNotMatch(listed, /Manage everyone|notes:admin/)
    await page.getByRole('button', { name: 'Allow' }).click()
    const granted = await exchange(started, await backAtApplication(page))
    assert.equal(decodeJwt(granted.access_token).scope, 'notes:read')
    const audited = await server.deps.db
      .select()
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.tenantId, t.tenantId),
          eq(auditEvents.action, 'ApplicationConsentGranted'),
          eq(auditEvents.actorId, member.user.id),
        ),
      )
    assert.deepEqual((audited[0].metadata as { scopes: string[] }).scopes, ['openid', 'notes:read'])
  })
})

test('two tenants’ issuers on one host keep their own provider sessions in one browser: the session cookie is at the issuer’s path', {
  skip,
}, async () => {
  const other = await createTenant(server)
  const theirs = await createApplication(server, other.slug, other.admin.accessToken, {
    name: 'Other Notes',
    type: 'web',
    redirectUris: [callbackUrl],
  })
  const theirUser = await signup(server, other.slug)
  await inFreshBrowser(browser, async (page) => {
    const who = await signup(server, t.slug)
    await signInThroughApplication(page, who)

    const config = await oidcClient(
      server,
      other.slug,
      theirs.application.clientId,
      theirs.clientSecret,
    )
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callbackUrl,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    })
    await page.goto(url.href.replace(server.url, server.deps.config.publicUrl))
    await page.waitForURL((at) => at.pathname === `/t/${other.slug}/sign-in`)
    await page.getByLabel('Email').fill(theirUser.email)
    await page.getByLabel('Password').fill(theirUser.password)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await backAtApplication(page)

    // The first tenant's single sign-on goes on.
    const live = await silently(page)
    assert.equal((await exchange(live.started, live.at)).claims()?.sub, who.user.id)
    const sessions = (await page.context().cookies()).filter((c) => c.name === '_session')
    assert.deepEqual(
      sessions.map((c) => c.path).sort(),
      [`/oidc/${other.slug}`, `/oidc/${t.slug}`].sort(),
    )
  })
})

test('a hosted session signed in without the provider’s sign-in cookie (older than it, or outliving it) still signs in to an application once, then single sign-on', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await signInOnHostedPage(page)
    await page.context().clearCookies({ name: 'ta_oidc_sign_in' })
    const started = await start(firstParty)
    await page.goto(started.url)
    const at = await backAtApplication(page)
    assert.equal((await exchange(started, at)).claims()?.sub, user.userId)
    assert.ok((await silently(page)).at.searchParams.get('code'))
  })
})

test('an account switch through the application’s sign-in page: the switch page carries the pages’ headers and the first authorization reaches the application as the new user', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const first = await signup(server, t.slug)
    const second = await signup(server, t.slug)
    await signInThroughApplication(page, first)
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/account`)
    await page.locator('form.sign-out button').click()
    await page.waitForURL((url) => !url.pathname.endsWith('/account'))

    // Every answer of the provider's own pages on the way, the switch page among them.
    const answers: { url: string; status: number; headers: Record<string, string> }[] = []
    page.on('response', (res) => {
      if (new URL(res.url()).pathname.startsWith(`/oidc/${t.slug}/`)) {
        answers.push({ url: res.url(), status: res.status(), headers: res.headers() })
      }
    })
    const started = await start(firstParty)
    await page.goto(started.url)
    await signInWithPassword(page, second)
    const at = await backAtApplication(page)
    assert.equal((await exchange(started, at)).claims()?.sub, second.user.id)
    for (const answer of answers) assert.ok(answer.status < 400, JSON.stringify(answer))
    const pages = answers.filter((a) => (a.headers['content-type'] ?? '').startsWith('text/html'))
    assert.ok(pages.length > 0, 'the switch page was not seen')
    for (const switchPage of pages) {
      assert.match(switchPage.headers['content-security-policy'] ?? '', /frame-ancestors 'none'/)
      assert.equal(switchPage.headers['x-frame-options'], 'DENY')
      assert.equal(switchPage.headers['x-content-type-options'], 'nosniff')
      // A step of the authorization: a popup keeps its window.opener (web/http.ts).
      assert.equal(switchPage.headers['cross-origin-opener-policy'], 'unsafe-none')
    }
  })
})
