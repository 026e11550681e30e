// Signing in to an application through a popup (issue 36): the application's page opens the
// authorization in a window of its own (window.open, as oidc-client-ts's signinPopup, MSAL's
// and Auth0's popups do), the person signs in on the hosted pages in that window, and the
// application's callback page, back in the popup, hands the code to the page that opened
// it through `window.opener`. A Cross-Origin-Opener-Policy of `same-origin` on any page of
// the chain puts the popup in a browsing context group of its own and `window.opener` is
// null from then on, so the pages an authorization passes through send `unsafe-none`
// (web/http.ts), and the service's other pages keep `same-origin`.
//
// The assertion is on `window.opener` itself: oidc-client-ts 3.5 falls back to a
// BroadcastChannel when the opener is gone, so its signinPopup resolving proves nothing.
//
// Browsers apply Cross-Origin-Opener-Policy only in a secure context (HTTPS, or a loopback
// host such as localhost), so at the other browser tests' http://auth.test the header has no
// effect and this test could not fail: the service is reached at http://localhost:<port>
// (fixtures/secure-origin.ts), the application is a tiny server at http://127.0.0.1:<port>,
// another origin and a secure context too.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { after, before, type TestContext, test } from 'node:test'
import * as client from 'openid-client'
import type { Browser, Page, Response } from 'playwright-core'
import { inFreshBrowser, launchChromium, chromiumSkip as skip } from '../fixtures/browser.ts'
import { createApplication, issuerOf, oidcClient, signInOnSignInPage } from '../fixtures/oidc.ts'
import { startBehindLocalhost } from '../fixtures/secure-origin.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'
import { PageClient } from './page-client.ts'

let server: TestServer
let browser: Browser
let t: TenantFixture
let user: { email: string; password: string; userId: string }
let app: Server
let origin: string
/** What the application's popup callback pages reported: whether they still had an opener. */
const reports: { page: string; opener: boolean; search: string }[] = []
let firstParty: { clientId: string; clientSecret: string }
let thirdParty: { clientId: string; clientSecret: string }
let spa: { clientId: string }

const bundle = join(
  dirname(createRequire(import.meta.url).resolve('oidc-client-ts/package.json')),
  'dist/browser/oidc-client-ts.min.js',
)

/** The application's pages (inline script: the application is not the service). */
function appPage(script: string, src = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Application</title>${src}</head><body><p id="out">…</p><script>${script}</script></body></html>`
}

const PAGES: Record<string, () => string> = {
  // The page that opens the popup, and keeps what the popup posts back to it.
  '/': () =>
    appPage(`window.received = []
addEventListener('message', (event) => {
  if (event.origin === location.origin) window.received.push(event.data)
})`),
  // The popup's callback: reports whether it still has its opener, and hands it the answer.
  '/callback': () =>
    appPage(`const opener = window.opener !== null
fetch('/report?page=callback&opener=' + opener + '&search=' + encodeURIComponent(location.search))
document.getElementById('out').textContent = opener ? 'opener kept' : 'opener lost'
if (opener) window.opener.postMessage({ search: location.search }, location.origin)`),
  // oidc-client-ts: the page that calls signinPopup, and the popup's callback page.
  '/library': () =>
    appPage(
      `window.manager = new oidc.UserManager(${JSON.stringify({
        authority: '__ISSUER__',
        client_id: '__CLIENT__',
        redirect_uri: '__ORIGIN__/library',
        popup_redirect_uri: '__ORIGIN__/library-callback',
        scope: 'openid',
      })})`,
      '<script src="/oidc-client-ts.min.js"></script>',
    ),
  '/library-callback': () =>
    appPage(
      `const opener = window.opener !== null
fetch('/report?page=library-callback&opener=' + opener + '&search=' + encodeURIComponent(location.search))
  .then(() => new oidc.UserManager({ authority: '__ISSUER__', client_id: '__CLIENT__', redirect_uri: '__ORIGIN__/library', response_mode: 'query' }).signinPopupCallback())`,
      '<script src="/oidc-client-ts.min.js"></script>',
    ),
}

before(async (ctx) => {
  if (skip) return
  ;({ server } = await startBehindLocalhost(ctx as TestContext))
  t = await createTenant(server)
  const made = await signup(server, t.slug)
  user = { email: made.email, password: made.password, userId: made.user.id }
  app = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin)
    if (url.pathname === '/report') {
      reports.push({
        page: url.searchParams.get('page') ?? '',
        opener: url.searchParams.get('opener') === 'true',
        search: url.searchParams.get('search') ?? '',
      })
      return res.writeHead(204).end()
    }
    if (url.pathname === '/oidc-client-ts.min.js') {
      return res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end(readFileSync(bundle, 'utf8'))
    }
    const page = PAGES[url.pathname]
    if (!page) return res.writeHead(404).end()
    const body = page()
      .replaceAll('__ISSUER__', issuerOf(server, t.slug))
      .replaceAll('__CLIENT__', spa.clientId)
      .replaceAll('__ORIGIN__', origin)
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body)
  })
  await new Promise<void>((done) => app.listen(0, '127.0.0.1', done))
  origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  const web = async (name: string, first: boolean) => {
    const created = await createApplication(server, t.slug, t.admin.accessToken, {
      name,
      type: 'web',
      redirectUris: [`${origin}/callback`],
      firstParty: first,
    })
    return { clientId: created.application.clientId, clientSecret: String(created.clientSecret) }
  }
  firstParty = await web('Team Notes', true)
  thirdParty = await web('Gadget Planner', false)
  const madeSpa = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Pocket Planner',
    type: 'spa',
    redirectUris: [`${origin}/library`, `${origin}/library-callback`],
    firstParty: true,
  })
  spa = { clientId: madeSpa.application.clientId }
  browser = await launchChromium()
})

after(async () => {
  if (skip) return
  await browser?.close()
  await new Promise((done) => app?.close(done))
})

/**
 * The service's answers to the documents of `page`'s browser (the popup's: the application's
 * page never loads one), as `status path COOP` lines, redirects included.
 */
function watchOpenerPolicy(page: Page): string[] {
  const seen: string[] = []
  page.context().on('response', (response: Response) => {
    const url = new URL(response.url())
    if (url.origin !== server.deps.config.publicUrl) return
    if (response.request().resourceType() !== 'document') return
    const policy = response.headers()['cross-origin-opener-policy'] ?? '(none)'
    seen.push(`${response.status()} ${url.pathname} ${policy}`)
  })
  return seen
}

/** The application opens `url` in a popup: answers the popup's page. */
async function openPopup(page: Page, url: string): Promise<Page> {
  const [popup] = await Promise.all([
    page.waitForEvent('popup'),
    page.evaluate((href) => {
      window.open(href, 'sign-in', 'popup,width=480,height=720')
    }, url),
  ])
  return popup
}

interface Started {
  url: string
  verifier: string
  state: string
  nonce: string
  config: client.Configuration
}

async function start(who: { clientId: string; clientSecret: string }): Promise<Started> {
  const config = await oidcClient(server, t.slug, who.clientId, who.clientSecret)
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: `${origin}/callback`,
    scope: 'openid email',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  })
  return {
    url: url.href.replace(server.url, server.deps.config.publicUrl),
    verifier,
    state,
    nonce,
    config,
  }
}

/**
 * The popup is back at the application's callback: it kept its opener (asserted on the
 * popup's own `window.opener`), and the opener received the answer. Answers that answer.
 */
async function backInOpener(page: Page, popup: Page, seen: string[]): Promise<URL> {
  await popup.waitForURL((url) => url.href.startsWith(`${origin}/callback`))
  await popup.locator('#out', { hasText: /opener/ }).waitFor()
  assert.equal(
    await popup.evaluate(() => window.opener !== null),
    true,
    `the popup lost window.opener on the way through:\n${seen.join('\n')}`,
  )
  await page.waitForFunction(() => (window as unknown as { received: unknown[] }).received.length)
  const [message] = await page.evaluate(
    () => (window as unknown as { received: { search: string }[] }).received,
  )
  return new URL(`${origin}/callback${message.search}`)
}

/** Every answer of the service the popup went through (at least `least`) sent `unsafe-none`. */
function assertNoSevering(seen: string[], least = 3): void {
  assert.ok(seen.length >= least, seen.join('\n'))
  const severing = seen.filter((line) => !line.endsWith(' unsafe-none'))
  assert.deepEqual(severing, [], seen.join('\n'))
}

test('popup: a first-party application’s authorization signed in with a password in a popup hands the code back through window.opener; the code is good', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`${origin}/`)
    const started = await start(firstParty)
    assert.ok(started.url.startsWith(`${issuerOf(server, t.slug)}/auth?`), started.url)
    const seen = watchOpenerPolicy(page)
    const popup = await openPopup(page, started.url)
    await signInOnSignInPage(popup, t.slug, user)
    const at = await backInOpener(page, popup, seen)
    assertNoSevering(seen)
    // Through the interaction page, the sign-in page and the provider's resume.
    assert.ok(
      seen.some((line) => line.includes(`/t/${t.slug}/authorize/`)),
      seen.join('\n'),
    )
    assert.ok(
      seen.some((line) => line.includes(`/t/${t.slug}/sign-in `)),
      seen.join('\n'),
    )
    const tokens = await client.authorizationCodeGrant(started.config, at, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
      idTokenExpected: true,
    })
    assert.equal(tokens.claims()?.sub, user.userId)
    // The application is done with its popup (the libraries close it).
    await popup.close()

    // Signed in now (single sign-on): a second popup goes straight through.
    const again = await start(firstParty)
    await page.evaluate(() => {
      ;(window as unknown as { received: unknown[] }).received.length = 0
    })
    const seenAgain = watchOpenerPolicy(page)
    const second = await openPopup(page, again.url)
    const back = await backInOpener(page, second, seenAgain)
    // The provider's session and the grant answer at once: its redirect to the application.
    assertNoSevering(seenAgain, 1)
    assert.equal(back.searchParams.get('state'), again.state)
    assert.ok(back.searchParams.get('code'))
  })
})

test('popup: a third-party application’s consent page in a popup (sign-in, Allow) keeps window.opener', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`${origin}/`)
    const started = await start(thirdParty)
    const seen = watchOpenerPolicy(page)
    const popup = await openPopup(page, started.url)
    await signInOnSignInPage(popup, t.slug, user)
    await popup.getByRole('heading', { name: /Gadget Planner wants to use/ }).waitFor()
    await popup.getByRole('button', { name: 'Allow' }).click()
    const at = await backInOpener(page, popup, seen)
    assertNoSevering(seen)
    assert.ok(
      seen.some((line) => line.startsWith('200 ') && line.includes('/authorize/')),
      seen.join('\n'),
    )
    const tokens = await client.authorizationCodeGrant(started.config, at, {
      pkceCodeVerifier: started.verifier,
      expectedState: started.state,
      expectedNonce: started.nonce,
      idTokenExpected: true,
    })
    assert.equal(tokens.claims()?.sub, user.userId)
  })
})

test('popup: oidc-client-ts’s signinPopup signs in, and its callback page had window.opener (not the BroadcastChannel fallback)', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await page.goto(`${origin}/library`)
    const seen = watchOpenerPolicy(page)
    const popupOpened = page.waitForEvent('popup')
    const signedIn = page.evaluate(async () => {
      const manager = (window as unknown as { manager: { signinPopup(): Promise<unknown> } })
        .manager
      const got = (await manager.signinPopup()) as { profile: { sub: string; email?: string } }
      return got.profile
    })
    const popup = await popupOpened
    await signInOnSignInPage(popup, t.slug, user)
    const profile = await signedIn
    assert.equal(profile.sub, user.userId)
    const report = reports.findLast((r) => r.page === 'library-callback')
    assert.ok(report, 'the library’s callback page ran')
    assert.equal(report.opener, true, `the popup lost window.opener:\n${seen.join('\n')}`)
    assertNoSevering(seen)
  })
})

test('Cross-Origin-Opener-Policy: same-origin on the pages no authorization passes through; unsafe-none on the interaction page and the sign-in pages of an authorization in progress, then same-origin again', async (ctx) => {
  const own = await startTestServer(ctx)
  const tenant = await createTenant(own)
  const person = await signup(own, tenant.slug)
  const redirectUri = 'https://app.example.com/callback'
  const made = await createApplication(own, tenant.slug, tenant.admin.accessToken, {
    name: 'Team Notes',
    type: 'web',
    redirectUris: [redirectUri],
    firstParty: true,
  })
  const coop = (res: { headers: Headers }) => res.headers.get('cross-origin-opener-policy')
  const c = new PageClient(own, randomIp())

  // No authorization: the landing page, the sign-in page, an unknown page, the console.
  for (const path of ['/', `/t/${tenant.slug}/sign-in`, `/t/${tenant.slug}/nowhere`]) {
    const res = await c.get(path)
    assert.equal(coop(res), 'same-origin', path)
  }
  const consolePage = await fetch(`${own.url}/console/`)
  assert.equal(coop(consolePage), 'same-origin', '/console/')

  // An authorization: the provider's redirect, the interaction page's redirect to the
  // sign-in page, and the sign-in pages while the interaction is in progress.
  const config = await oidcClient(own, tenant.slug, made.application.clientId, made.clientSecret)
  const local = (url: string) => url.replace(own.deps.config.publicUrl, own.url)
  const auth = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    state: client.randomState(),
  })
  const toInteraction = await c.once('GET', local(auth.href))
  assert.equal(toInteraction.status, 303)
  assert.equal(coop(toInteraction), 'unsafe-none', 'the provider’s /auth redirect')
  const interaction = new URL(local(toInteraction.headers.get('location') ?? ''), local(auth.href))
  assert.match(interaction.pathname, new RegExp(`^/t/${tenant.slug}/authorize/`))
  const toSignIn = await c.once('GET', interaction.href)
  assert.equal(toSignIn.status, 303)
  assert.equal(coop(toSignIn), 'unsafe-none', 'the interaction page')
  for (const path of ['sign-in', 'sign-in/code', 'sign-in/sso', 'sign-up', 'nowhere']) {
    const res = await c.get(`/t/${tenant.slug}/${path}`)
    assert.equal(coop(res), 'unsafe-none', `${path} during the authorization`)
  }
  // Another tenant's pages are not part of this authorization.
  const other = await createTenant(own)
  assert.equal(coop(await c.get(`/t/${other.slug}/sign-in`)), 'same-origin')

  // The sign-in goes back to the interaction page, which finishes the authorization.
  await c.get(`/t/${tenant.slug}/sign-in`)
  const signedIn = await c.once('POST', `/t/${tenant.slug}/sign-in`, {
    _csrf: c.csrf(),
    email: person.email,
    password: person.password,
  })
  assert.equal(coop(signedIn), 'unsafe-none', 'the sign-in’s answer')
  const resume = await c.once('GET', interaction.href)
  assert.equal(resume.status, 303, await resume.text())
  assert.equal(coop(resume), 'unsafe-none', 'the interaction page’s way on')
  const resumeUrl = new URL(local(resume.headers.get('location') ?? ''), interaction.href)
  const toApp = await c.once('GET', resumeUrl.href)
  assert.equal(toApp.status, 303)
  assert.ok(toApp.headers.get('location')?.startsWith(redirectUri))
  assert.equal(coop(toApp), 'unsafe-none', 'the provider’s redirect to the application')

  // The authorization is over: the pages are back to same-origin.
  for (const path of ['account', 'sign-in']) {
    const res = await c.get(`/t/${tenant.slug}/${path}`)
    assert.equal(res.status, 200, path)
    assert.equal(coop(res), 'same-origin', `${path} after the authorization`)
  }
})
