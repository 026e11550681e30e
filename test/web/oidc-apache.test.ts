// A real relying party in front of a site: Apache with mod_auth_openidc, configured by
// examples/mod_auth_openidc/auth-openidc.conf as it is, signs people in to its /protected/
// pages through a tenant's OpenID provider (CONTRACT §11, Sign-in, Tokens, Logout), and
// Debian's Chromium is the person. Apache proxies every page to a tiny application here
// that answers the OIDC_CLAIM_* headers it receives: the claims Apache saw.
//
// Apache runs as a child process of the test on a port of its own, with its own
// ServerRoot, PidFile and ErrorLog in a temporary directory, stopped after the tests. The
// service is reached at http://localhost:<port> (its PUBLIC_URL) by the browser and by
// Apache alike, and Apache at http://127.0.0.1:<port>, so each keeps its own cookies.
//
// Needs Debian's apache2 and libapache2-mod-auth-openidc: without them the tests fail and
// say so. Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, type TestContext, test } from 'node:test'
import type { Browser, Page, Request } from 'playwright-core'
import { inFreshBrowser, chromiumSkip as skip } from '../fixtures/browser.ts'
import { createApplication, issuerOf, signInOnSignInPage } from '../fixtures/oidc.ts'
import { freePort, listening } from '../fixtures/ports.ts'
import { launchChromium, startBehindLocalhost } from '../fixtures/secure-origin.ts'
import { createTenant, signup, type TenantFixture, type TestServer } from '../helpers.ts'

const APACHE = '/usr/sbin/apache2'
const MODULES = '/usr/lib/apache2/modules'
const SITE_CONFIG = join(import.meta.dirname, '../../examples/mod_auth_openidc/auth-openidc.conf')

let server: TestServer
let publicUrl: string
let browser: Browser
let t: TenantFixture
let user: { email: string; password: string; userId: string }
let backend: Server
let apache: ChildProcess | undefined
let apacheDir: string | undefined
/** Apache's site, http://127.0.0.1:<port>. */
let site: string
let clientId: string

/** What the application behind Apache answers: the path it was asked and the claims. */
interface Seen {
  path: string
  claims: Record<string, string>
}

before(async (ctx) => {
  // Not a skip: this file exists to run Apache, and a CI without it must say so.
  const missing = [APACHE, join(MODULES, 'mod_auth_openidc.so')].filter((f) => !existsSync(f))
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(' and ')} missing: apt-get install -y apache2 libapache2-mod-auth-openidc`,
    )
  }
  if (skip) return
  ;({ server, publicUrl } = await startBehindLocalhost(ctx as TestContext))
  t = await createTenant(server)
  const made = await signup(server, t.slug)
  user = { email: made.email, password: made.password, userId: made.user.id }
  backend = createServer((req, res) => {
    const claims: Record<string, string> = {}
    for (const [name, value] of Object.entries(req.headers)) {
      if (name.startsWith('oidc_claim_')) claims[name.slice('oidc_claim_'.length)] = String(value)
    }
    const seen: Seen = { path: req.url ?? '/', claims }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen))
  })
  await new Promise<void>((done) => backend.listen(0, '127.0.0.1', done))
  await startApache()
  browser = await launchChromium(ctx as TestContext)
})

after(async () => {
  await stopApache()
  if (apacheDir) rmSync(apacheDir, { recursive: true, force: true })
  await new Promise((done) => (backend ? backend.close(done) : done(undefined)))
})

/**
 * Starts Apache on a free port with an application registered for it. The port is found
 * free just before Apache binds it; should another process take it in between, Apache
 * says so in its log and the next attempt takes another port.
 */
async function startApache(): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    site = `http://127.0.0.1:${port}`
    const created = await createApplication(server, t.slug, t.admin.accessToken, {
      name: 'Intranet behind Apache',
      type: 'web',
      redirectUris: [`${site}/protected/redirect_uri`],
      postLogoutRedirectUris: [`${site}/logged-out`],
    })
    clientId = created.application.clientId
    apacheDir = mkdtempSync(join(tmpdir(), 'tenant-auth-apache-'))
    const conf = join(apacheDir, 'httpd.conf')
    writeFileSync(
      conf,
      httpdConf(apacheDir, port, {
        OIDC_ISSUER: issuerOf(server, t.slug),
        OIDC_CLIENT_ID: clientId,
        OIDC_CLIENT_SECRET: String(created.clientSecret),
        OIDC_CRYPTO_PASSPHRASE: randomBytes(32).toString('base64url'),
        SITE_URL: site,
        BACKEND_URL: `http://127.0.0.1:${(backend.address() as AddressInfo).port}/`,
      }),
    )
    let stderr = ''
    // -X: one process in the foreground, the test's child, which SIGTERM stops.
    apache = spawn(APACHE, ['-X', '-f', conf], { stdio: ['ignore', 'ignore', 'pipe'] })
    // A test run that ends without the after() hook (a forced exit) takes Apache with it.
    const child = apache
    process.once('exit', () => child.kill('SIGKILL'))
    apache.stderr?.on('data', (chunk) => {
      stderr += chunk
    })
    try {
      await listening(apache, port)
      return
    } catch (error) {
      const log = apacheLog()
      await stopApache()
      if (attempt < 3 && /Address already in use/.test(log)) {
        rmSync(apacheDir, { recursive: true, force: true })
        continue
      }
      throw new Error(`Apache did not start: ${(error as Error).message}\n${stderr}${log}`)
    }
  }
}

/** The whole configuration: the server's own frame around the example's site part. */
function httpdConf(dir: string, port: number, defines: Record<string, string>): string {
  const modules = {
    mpm_event_module: 'mod_mpm_event.so',
    authn_core_module: 'mod_authn_core.so',
    authz_core_module: 'mod_authz_core.so',
    authz_user_module: 'mod_authz_user.so',
    proxy_module: 'mod_proxy.so',
    proxy_http_module: 'mod_proxy_http.so',
    auth_openidc_module: 'mod_auth_openidc.so',
  }
  return [
    `ServerRoot "${dir}"`,
    'ServerName 127.0.0.1',
    `Listen 127.0.0.1:${port}`,
    `PidFile "${dir}/httpd.pid"`,
    `DefaultRuntimeDir "${dir}"`,
    `ErrorLog "${dir}/error.log"`,
    'LogLevel warn',
    // Apache started by root serves as another user (it refuses to serve as root).
    ...(process.getuid?.() === 0 ? ['User www-data', 'Group www-data'] : []),
    ...Object.entries(modules).map(([name, file]) => `LoadModule ${name} ${MODULES}/${file}`),
    ...Object.entries(defines).map(([name, value]) => `Define ${name} "${value}"`),
    `Include "${SITE_CONFIG}"`,
    '',
  ].join('\n')
}

function apacheLog(): string {
  const file = apacheDir && join(apacheDir, 'error.log')
  return file && existsSync(file) ? readFileSync(file, 'utf8') : ''
}

async function stopApache(): Promise<void> {
  const child = apache
  apache = undefined
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(timer)
}

/** What the application behind Apache answered for the page the browser shows. */
async function seen(page: Page): Promise<Seen> {
  return JSON.parse((await page.locator('body').textContent()) ?? '') as Seen
}

/** Opens a protected page; the browser ends on it after whatever sign-in it needs. */
async function openProtected(page: Page, signIn: boolean): Promise<Seen> {
  const target = `${site}/protected/claims`
  await page.goto(target)
  if (signIn) await signInOnSignInPage(page, t.slug, user)
  await page.waitForURL(target).catch((error) => {
    throw new Error(`not back at Apache but at ${page.url()}: ${error.message}\n${apacheLog()}`)
  })
  return seen(page)
}

/**
 * Signs in through Apache, then out by mod_auth_openidc's logout URL: the end-session
 * endpoint of the provider, confirmed there, and back at the registered post-logout URI.
 */
async function signInAndOut(page: Page): Promise<void> {
  assert.equal((await openProtected(page, true)).claims.sub, user.userId)
  const loggedOut = `${site}/logged-out`
  await page.goto(`${site}/protected/redirect_uri?logout=${encodeURIComponent(loggedOut)}`)
  await page.waitForURL((url) => url.href.startsWith(`${issuerOf(server, t.slug)}/session/end`))
  const endSession = new URL(page.url())
  assert.equal(endSession.searchParams.get('post_logout_redirect_uri'), loggedOut)
  assert.ok(endSession.searchParams.get('id_token_hint'), 'the ID token as hint')
  // The hosted pages' logout page (web/pages/oidc-logout.ts) asks the person to confirm.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.waitForURL(loggedOut).catch((error) => {
    throw new Error(`not back at Apache but at ${page.url()}: ${error.message}\n${apacheLog()}`)
  })
  assert.deepEqual(await seen(page), { path: '/logged-out', claims: {} })
}

/** The documents the browser asks for while `steps` run, without their query strings. */
async function navigations(page: Page, steps: () => Promise<void>): Promise<string[]> {
  const urls: string[] = []
  const record = (request: Request) => {
    if (request.isNavigationRequest()) urls.push(request.url().replace(/\?.*/, ''))
  }
  page.on('request', record)
  try {
    await steps()
  } finally {
    page.off('request', record)
  }
  return urls
}

test('a page behind Apache mod_auth_openidc: the browser signs in on the tenant hosted page, and the application behind Apache gets the claims (sub = user id, email)', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    const shown = await openProtected(page, true)
    assert.equal(shown.path, '/protected/claims')
    assert.equal(shown.claims.sub, user.userId)
    assert.equal(shown.claims.email, user.email)
    assert.equal(shown.claims.iss, issuerOf(server, t.slug))
    assert.equal(shown.claims.aud, clientId)
    assert.equal(shown.claims.amr, 'pwd')
    // Apache keeps its own session: the next page asks the provider nothing.
    const visited = await navigations(page, async () => {
      assert.equal((await openProtected(page, false)).claims.sub, user.userId)
    })
    assert.deepEqual(visited, [`${site}/protected/claims`])
  })
})

test('RP-initiated logout through mod_auth_openidc: its logout URL ends Apache session, passes by the end-session endpoint and comes back to the registered post-logout URI; the next protected page goes to the provider again', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await signInAndOut(page)
    const visited = await navigations(page, async () => {
      await page.goto(`${site}/protected/claims`)
    })
    assert.ok(visited.includes(`${issuerOf(server, t.slug)}/auth`), visited.join(' '))
  })
})

test('RP-initiated logout ends the hosted session too: the account page and the next protected page ask for a sign-in', {
  skip,
}, async () => {
  await inFreshBrowser(browser, async (page) => {
    await signInAndOut(page)
    await page.goto(`${publicUrl}/t/${t.slug}/account`)
    assert.equal(new URL(page.url()).pathname, `/t/${t.slug}/sign-in`)
    assert.equal((await openProtected(page, true)).claims.sub, user.userId)
  })
})
