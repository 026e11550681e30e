// Logout at the OpenID provider (CONTRACT §11, Logout and Errors) with real parties:
// openid-client as the application, Chromium as the person, and the application's
// back-channel logout endpoint as a small HTTP server on 127.0.0.1 that verifies each logout
// token with jose against the issuer's jwks (iss, aud, typ, events, sub, sid, no nonce).
//
// - RP-initiated logout 1.0: the confirmation page in the hosted pages' look; Sign out
//   ends the hosted session (the service session revoked, the page cookie gone), sends the
//   logout token and returns to the registered post-logout URI with `state`; without a
//   post-logout URI, the signed-out page; an unregistered one is an HTML 400, never a
//   redirect, and ends nothing.
// - Back-Channel Logout 1.0: when the hosted session ends any other way (the pages'
//   sign-out, logout-all, password change, suspension, deletion) the application hears of
//   it; a receiver that fails does not fail the user's request.
//
// The back-channel URI: the API refuses loopback and http for it, and oidc-provider refuses
// special-use addresses when it connects (the service itself calls it); this server runs
// with OIDC_BACKCHANNEL_ALLOW_LOOPBACK (development and tests only), which lets exactly a
// loopback URI through both.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { createLocalJWKSet, decodeProtectedHeader, type JWTPayload, jwtVerify } from 'jose'
import * as client from 'openid-client'
import type { Browser, Page } from 'playwright-core'
import { and, eq } from '../../src/db/orm.ts'
import { auditEvents, oidcModels, sessions } from '../../src/db/schema.ts'
import {
  checkAccessibility,
  inFreshBrowser,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { createApplication, issuerOf, oidcClient } from '../fixtures/oidc.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

const EVENT = 'http://schemas.openid.net/event/backchannel-logout'

let server: TestServer
let browser: Browser
let t: TenantFixture
let app: { id: string; clientId: string; clientSecret: string }
let rp: Server
let rpBase: string
/** The callbacks the application received (sign-in and post-logout), newest last. */
const visits: URL[] = []
/** The verified logout tokens the back-channel endpoint received, newest last. */
const logouts: JWTPayload[] = []
/** What the back-channel endpoint answers (500: a failing application). */
let backchannelStatus = 200
let jwks: ReturnType<typeof createLocalJWKSet>

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx, { oidcBackchannelAllowLoopback: true })
  t = await createTenant(server)
  rp = createServer((req, res) => {
    const url = new URL(req.url ?? '/', rpBase)
    if (url.pathname === '/backchannel' && req.method === 'POST') {
      let body = ''
      req.on('data', (chunk) => {
        body += chunk
      })
      req.on('end', async () => {
        try {
          const token = new URLSearchParams(body).get('logout_token') ?? ''
          assert.equal(decodeProtectedHeader(token).typ, 'logout+jwt')
          const { payload } = await jwtVerify(token, jwks, {
            issuer: issuerOf(server, t.slug),
            audience: app.clientId,
            typ: 'logout+jwt',
          })
          logouts.push(payload)
        } catch (error) {
          logouts.push({ invalid: String(error) })
        }
        res.writeHead(backchannelStatus).end()
      })
      return
    }
    if (url.pathname !== '/favicon.ico') visits.push(url)
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the application')
  })
  await new Promise<void>((done) => rp.listen(0, '127.0.0.1', done))
  rpBase = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`
  const created = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Team Notes',
    type: 'web',
    redirectUris: [`${rpBase}/callback`],
    postLogoutRedirectUris: [`${rpBase}/logged-out`],
    backchannelLogoutUri: `${rpBase}/backchannel`,
  })
  app = {
    id: created.application.id,
    clientId: created.application.clientId,
    clientSecret: String(created.clientSecret),
  }
  const keys = await fetch(`${server.url}/oidc/${t.slug}/jwks`).then((r) => r.json())
  jwks = createLocalJWKSet(keys)
  browser = await launchChromium(new URL(server.url).port)
})

after(async () => {
  if (skip) return
  await browser?.close()
  await new Promise((done) => rp?.close(done))
})

const publicUrl = (url: URL | string) =>
  String(url).replace(server.url, server.deps.config.publicUrl)

interface SignedIn {
  config: client.Configuration
  idToken: string
  sid: string
  /** The service session the browser's hosted pages hold. */
  serviceSessionId: string
}

/** A new user signs in to the application in `page` (the hosted sign-in page on the way). */
async function signInThroughApplication(
  page: Page,
  who: { email: string; password: string; user: { id: string } },
): Promise<SignedIn> {
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${rpBase}/callback`,
    scope: 'openid email',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
  })
  await page.goto(publicUrl(url))
  await page.waitForURL((u) => u.pathname === `/t/${t.slug}/sign-in`)
  await page.getByLabel('Email').fill(who.email)
  await page.getByLabel('Password').fill(who.password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL((u) => u.href.startsWith(`${rpBase}/callback`))
  const at = visits.at(-1) as URL
  const tokens = await client.authorizationCodeGrant(config, at, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    idTokenExpected: true,
  })
  const claims = tokens.claims()
  assert.ok(claims?.sid, 'the ID token names the provider session (sid)')
  const rows = await server.deps.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(eq(sessions.tenantId, t.tenantId), eq(sessions.userId, who.user.id)))
  // The user's sessions: signup's (API) and the hosted sign-in's, the newest.
  const serviceSessionId = rows
    .map((r) => r.id)
    .sort()
    .at(-1) as string
  return {
    config,
    idToken: String(tokens.id_token),
    sid: String(claims.sid),
    serviceSessionId,
  }
}

async function isRevoked(sessionId: string): Promise<boolean> {
  const rows = await server.deps.db
    .select({ revokedAt: sessions.revokedAt })
    .from(sessions)
    .where(and(eq(sessions.tenantId, t.tenantId), eq(sessions.id, sessionId)))
  return rows[0]?.revokedAt !== null
}

/** Waits (up to 5 s) for a logout token naming `sid`; fails on one that did not verify. */
async function logoutTokenFor(sid: string): Promise<JWTPayload> {
  for (let i = 0; i < 100; i++) {
    const bad = logouts.find((p) => 'invalid' in p)
    assert.equal(bad, undefined, String(bad?.invalid))
    const found = logouts.find((p) => p.sid === sid)
    if (found) return found
    await new Promise((done) => setTimeout(done, 50))
  }
  throw new Error(`no logout token for sid ${sid}`)
}

function assertLogoutToken(token: JWTPayload, who: { user: { id: string } }, sid: string) {
  assert.equal(token.sub, who.user.id)
  assert.equal(token.sid, sid)
  assert.equal(token.aud, app.clientId)
  assert.deepEqual(token.events, { [EVENT]: {} })
  assert.equal(token.nonce, undefined)
  assert.ok(token.jti && token.iat && token.exp)
}

test('RP-initiated logout: the hosted confirmation page, Sign out ends the hosted session, sends the logout token and returns to the registered URI with state', {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    const end = client.buildEndSessionUrl(signedIn.config, {
      id_token_hint: signedIn.idToken,
      post_logout_redirect_uri: `${rpBase}/logged-out`,
      state: 'bye-123',
    })
    const confirmation = await page.goto(publicUrl(end))
    await page.getByRole('heading', { name: /^Sign out of / }).waitFor()
    // An application's sign-out, which a popup may carry (web/http.ts, openerPolicy).
    assert.equal(await confirmation?.headerValue('cross-origin-opener-policy'), 'unsafe-none')
    assert.match(
      String(await page.locator('main').textContent()),
      /Team Notes asked to sign you out/,
    )
    await checkAccessibility(page, 'logout confirmation')
    await screenshots(page, 'w4-logout-confirm')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL((u) => u.href.startsWith(`${rpBase}/logged-out`))
    const back = visits.at(-1) as URL
    assert.equal(back.searchParams.get('state'), 'bye-123')
    assertLogoutToken(await logoutTokenFor(signedIn.sid), who, signedIn.sid)
    // The hosted session ended as the pages' sign-out ends it.
    assert.equal(await isRevoked(signedIn.serviceSessionId), true)
    const logouts = await server.deps.db
      .select({ metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(
        and(
          eq(auditEvents.tenantId, t.tenantId),
          eq(auditEvents.userId, who.user.id),
          eq(auditEvents.action, 'UserLogout'),
        ),
      )
    assert.equal(logouts.length, 1)
    assert.equal((logouts[0].metadata as { via?: string }).via, 'oidc')
    // The page cookie went with it, as on the pages' sign-out.
    const cookies = await page.context().cookies()
    assert.equal(
      cookies.find((c) => c.name === 'ta_session'),
      undefined,
    )
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/account`)
    await page.waitForURL((u) => u.pathname === `/t/${t.slug}/sign-in`)
  })
})

test('RP-initiated logout without a post-logout URI ends on the hosted signed-out page', {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    const end = client.buildEndSessionUrl(signedIn.config, { id_token_hint: signedIn.idToken })
    await page.goto(publicUrl(end))
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor()
    await checkAccessibility(page, 'signed out')
    await screenshots(page, 'w4-logout-done')
    assert.equal(await isRevoked(signedIn.serviceSessionId), true)
    assertLogoutToken(await logoutTokenFor(signedIn.sid), who, signedIn.sid)
  })
})

test('RP-initiated logout: Stay signed in keeps the hosted session', { skip }, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    const end = client.buildEndSessionUrl(signedIn.config, {
      id_token_hint: signedIn.idToken,
      post_logout_redirect_uri: `${rpBase}/logged-out`,
    })
    await page.goto(publicUrl(end))
    await page.getByRole('button', { name: 'Stay signed in' }).click()
    await page.waitForURL((u) => u.href.startsWith(`${rpBase}/logged-out`))
    assert.equal(await isRevoked(signedIn.serviceSessionId), false)
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/account`)
    assert.equal(new URL(page.url()).pathname, `/t/${t.slug}/account`)
  })
})

test('RP-initiated logout to an unregistered post_logout_redirect_uri: an HTML 400 page, never a redirect, and nothing ends', {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    const count = logouts.length
    for (const uri of [
      'https://evil.example/logged-out',
      `${rpBase}/logged-out/extra`,
      `${rpBase}/callback`,
    ]) {
      const end = client.buildEndSessionUrl(signedIn.config, {
        id_token_hint: signedIn.idToken,
        post_logout_redirect_uri: uri,
      })
      const response = await page.goto(publicUrl(end))
      assert.equal(response?.status(), 400, uri)
      assert.equal(response?.headers().location, undefined)
      assert.match(String(response?.headers()['content-type']), /^text\/html/)
      assert.equal(new URL(page.url()).host, 'auth.test')
    }
    assert.equal(await isRevoked(signedIn.serviceSessionId), false)
    assert.equal(logouts.length, count)
  })
})

test("back-channel logout: the hosted pages' sign-out sends the logout token of the provider session signed in from it", {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    await page.goto(`${server.deps.config.publicUrl}/t/${t.slug}/account`)
    await page.locator('form.sign-out button').click()
    await page.waitForURL((u) => !u.pathname.endsWith('/account'))
    assertLogoutToken(await logoutTokenFor(signedIn.sid), who, signedIn.sid)
  })
})

for (const [name, end] of [
  [
    'logout-all',
    (who: Awaited<ReturnType<typeof signup>>) =>
      server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
        token: who.accessToken,
      }),
  ],
  [
    'a password change',
    (who: Awaited<ReturnType<typeof signup>>) =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/me/password`,
        { currentPassword: who.password, newPassword: 'quartz-harbor-lantern-58' },
        { token: who.accessToken },
      ),
  ],
  [
    'suspension',
    (who: Awaited<ReturnType<typeof signup>>) =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/users/${who.user.id}`,
        { status: 'Suspended' },
        { token: t.admin.accessToken },
      ),
  ],
  [
    'erasure',
    (who: Awaited<ReturnType<typeof signup>>) =>
      server.request('POST', `/v1/${t.slug}/users/${who.user.id}/erase`, undefined, {
        token: t.admin.accessToken,
      }),
  ],
  [
    'deletion',
    (who: Awaited<ReturnType<typeof signup>>) =>
      server.request('DELETE', `/v1/${t.slug}/users/${who.user.id}`, undefined, {
        token: t.admin.accessToken,
      }),
  ],
] as const) {
  test(`back-channel logout: ${name} ends the hosted session and the application receives a logout token`, {
    skip,
  }, async () => {
    const who = await signup(server, t.slug)
    await inFreshBrowser(browser, async (page) => {
      const signedIn = await signInThroughApplication(page, who)
      const res = await end(who)
      assert.ok(res.status === 200 || res.status === 204, JSON.stringify(res.body))
      assertLogoutToken(await logoutTokenFor(signedIn.sid), who, signedIn.sid)
    })
  })
}

test('back-channel logout: an application that answers 500 does not fail the user, and is told only once', {
  skip,
}, async () => {
  const who = await signup(server, t.slug)
  await inFreshBrowser(browser, async (page) => {
    const signedIn = await signInThroughApplication(page, who)
    backchannelStatus = 500
    try {
      const res = await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
        token: who.accessToken,
      })
      assert.equal(res.status, 200)
      await logoutTokenFor(signedIn.sid)
    } finally {
      backchannelStatus = 200
    }
    // Its provider session ended with it (deleted), so nothing can send it again.
    assert.equal(logouts.filter((p) => p.sid === signedIn.sid).length, 1)
    const left = await server.deps.db
      .select({ id: oidcModels.id })
      .from(oidcModels)
      .where(
        and(
          eq(oidcModels.tenantId, t.tenantId),
          eq(oidcModels.model, 'Session'),
          eq(oidcModels.accountId, who.user.id),
        ),
      )
    assert.deepEqual(left, [])
  })
})
