// The CAPTCHA on the hosted pages (CONTRACT §21). In Debian's Chromium: a sign-up on a
// workspace with ALTCHA, as a person makes it: the widget (served by the service, its CSP
// 'self' only) is ticked, solves its challenge in the browser's workers, and the form
// submits the answer; the account exists, and no CSP violation was reported. Over HTTP:
// each page of an action in `on` carries the widget and a CSP opened only to its
// provider's origins, pages of other actions and other workspaces keep the strict CSP, and
// a page posted without an answer says so and creates nothing. Screenshots of the pages
// with the widget at 1280 and 390 px go to /tmp/shots-captcha/.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { solveChallenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import type { Browser } from 'playwright-core'
import { eq } from '../../src/db/orm.ts'
import { users } from '../../src/db/schema.ts'
import { CSP } from '../../src/web/http.ts'
import { setTenant, unchanged } from '../db.ts'
import {
  checkAccessibility,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { enrolTotp, totpAt } from '../fixtures/mfa.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { PageClient } from './page-client.ts'

const SHOTS = '/tmp/shots-captcha'

/** An ALTCHA answer of the tenant's, as the widget puts it in the form. */
async function solved(slug: string): Promise<string> {
  const challenge = await (await fetch(`${server.url}/v1/${slug}/captcha/challenge`)).json()
  const solution = await solveChallenge({ challenge, deriveKey })
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64')
}

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

async function withCaptcha(captcha: Record<string, unknown>): Promise<TenantFixture> {
  const t = await createTenant(server)
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { captcha, authPolicy: 'PasswordAndPasswordless' },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return t
}

const page = async (path: string) => {
  const res = await fetch(`${server.url}${path}`)
  return { res, text: await res.text(), csp: res.headers.get('content-security-policy') ?? '' }
}

describe('ALTCHA in Chromium', { skip }, () => {
  let browser: Browser
  before(async () => {
    browser = await launchChromium()
  })
  after(() => browser?.close())

  test('a sign-up on the hosted page: the widget solves its challenge and the form submits the answer', async () => {
    const t = await withCaptcha({
      provider: 'altcha',
      on: ['sign_up', 'sign_in', 'password_reset', 'login_code'],
    })
    const context = await browser.newContext()
    const tab = await context.newPage()
    const problems: string[] = []
    // Chromium asks every site for /favicon.ico, which the service does not serve.
    tab.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
        problems.push(m.text())
      }
    })
    tab.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico'))
        problems.push(`${r.status()} ${r.url()}`)
    })
    tab.on('pageerror', (e) => problems.push(e.message))
    try {
      const answer = await tab.goto(`${server.url}/t/${t.slug}/sign-up`)
      assert.equal(answer?.status(), 200)
      await tab.waitForSelector('altcha-widget input[type="checkbox"]', { state: 'attached' })
      await screenshots(tab, 'sign-up-altcha', SHOTS)
      await checkAccessibility(tab, 'sign-up with ALTCHA')
      const email = uniqueEmail()
      await tab.fill('#email', email)
      await tab.fill('#password', STRONG_PASSWORD)
      await tab.locator('altcha-widget label').click()
      await tab.waitForFunction(
        () =>
          (document.querySelector('input[name="captchaToken"]') as HTMLInputElement | null)?.value,
        undefined,
        { timeout: 60_000 },
      )
      await screenshots(tab, 'sign-up-altcha-verified', SHOTS)
      await Promise.all([tab.waitForURL(/\/account$/), tab.click('button[type="submit"]')])
      const created = await server.deps.db.select().from(users).where(eq(users.email, email))
      assert.equal(created.length, 1, 'the account exists')
      assert.deepEqual(problems, [], 'no script error, no CSP violation')
      // The sign-in page shows the widget too, in the page's language.
      await context.clearCookies()
      await tab.goto(`${server.url}/t/${t.slug}/sign-in?lang=de`)
      await tab.waitForSelector('altcha-widget input[type="checkbox"]', { state: 'attached' })
      const words = (await tab.locator('altcha-widget').textContent()) ?? ''
      assert.match(words, /Ich bin kein Roboter/)
      // Its footer too: the page's words around the widget's link.
      assert.match(words, /Geschützt durch\s*ALTCHA/)
      assert.doesNotMatch(words, /Protected by/)
      const footerLink = tab.locator('altcha-widget a[href="https://altcha.org/"]')
      assert.equal(await footerLink.getAttribute('aria-label'), 'ALTCHA (offizielle Website)')
      await screenshots(tab, 'sign-in-altcha-de', SHOTS)
      for (const path of ['reset-password', 'sign-in/code']) {
        await tab.goto(`${server.url}/t/${t.slug}/${path}?lang=en`)
        await tab.waitForSelector('altcha-widget input[type="checkbox"]', { state: 'attached' })
        await screenshots(tab, `${path.replace('/', '-')}-altcha`, SHOTS)
      }
      assert.deepEqual(problems, [], 'no script error, no CSP violation')
    } finally {
      await context.close()
    }
  })
})

describe('the pages of the actions in `on`', () => {
  test("ALTCHA: the widget and the service's own assets, the CSP 'self' with its workers", async () => {
    const t = await withCaptcha({ provider: 'altcha', on: ['sign_up', 'password_reset'] })
    for (const path of ['sign-up', 'reset-password']) {
      const { res, text, csp } = await page(`/t/${t.slug}/${path}`)
      assert.equal(res.status, 200)
      assert.match(text, /<altcha-widget challenge="\/v1\/[^"]+\/captcha\/challenge"/)
      assert.match(text, /src="\/assets\/altcha\/altcha\.js"/)
      assert.equal(csp, `${CSP}; worker-src 'self'`)
    }
    // Actions not in `on`: no widget, the strict CSP.
    for (const path of ['sign-in', 'sign-in/code']) {
      const { text, csp } = await page(`/t/${t.slug}/${path}`)
      assert.doesNotMatch(text, /altcha-widget/)
      assert.equal(csp, CSP)
    }
    for (const asset of [
      'altcha/altcha.js',
      'altcha/altcha.css',
      'altcha/pbkdf2.js',
      'captcha.js',
    ]) {
      const res = await fetch(`${server.url}/assets/${asset}`)
      assert.equal(res.status, 200, asset)
      await res.arrayBuffer()
    }
  })

  test("a third-party widget: the CSP opened to that provider's origins only, on that page only", async () => {
    const expected = {
      turnstile: ['https://challenges.cloudflare.com'],
      hcaptcha: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
      recaptcha: ['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/'],
    }
    const everyOrigin = ['cloudflare.com', 'hcaptcha.com', 'google.com', 'gstatic.com']
    for (const [provider, origins] of Object.entries(expected)) {
      const t = await withCaptcha({
        provider,
        siteKey: `site-${provider}`,
        secret: 'secret',
        on: ['login_code'],
      })
      const { text, csp } = await page(`/t/${t.slug}/sign-in/code`)
      assert.match(text, new RegExp(`data-sitekey="site-${provider}"`))
      const script = csp.split('; ').find((d) => d.startsWith('script-src '))
      assert.equal(script, `script-src 'self' ${origins.join(' ')}`, provider)
      assert.match(csp, /frame-src https:\/\//)
      const own = new Set(
        origins.map((o) => new URL(o.replace('*.', '')).hostname.split('.').slice(-2).join('.')),
      )
      for (const other of everyOrigin.filter((o) => !own.has(o))) {
        assert.ok(!csp.includes(other), `${provider}'s page names no ${other}: ${csp}`)
      }
      // The same workspace's pages of other actions keep the strict CSP.
      assert.equal((await page(`/t/${t.slug}/sign-up`)).csp, CSP)
      assert.equal((await page(`/t/${t.slug}/sign-in`)).csp, CSP)
    }
  })

  test("a password sign-in's second step shows the widget again and needs its own answer", async () => {
    const t = await withCaptcha({ provider: 'altcha', on: ['sign_in'] })
    await setTenant(server, t.slug, { mfaPolicy: 'Optional' })
    const user = await signup(server, t.slug)
    const secret = await enrolTotp(server, t.slug, user.accessToken)
    const browser = new PageClient(server)
    await browser.get(`/t/${t.slug}/sign-in`)
    const fields = { email: user.email, password: STRONG_PASSWORD }
    const second = await browser.post(`/t/${t.slug}/sign-in`, {
      ...fields,
      captchaToken: await solved(t.slug),
    })
    assert.equal(second.status, 200)
    assert.match(second.html, /name="totpCode"/)
    assert.match(second.html, /<altcha-widget /)
    assert.equal(second.headers.get('content-security-policy'), `${CSP}; worker-src 'self'`)
    const pending = /name="pending" value="([^"]+)"/.exec(second.html)?.[1] ?? ''
    // Without an answer: the same step again, saying why.
    const refused = await browser.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending,
      method: 'totp',
      totpCode: totpAt(server, secret),
    })
    assert.match(refused.html, /not a robot/)
    const done = await browser.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: /name="pending" value="([^"]+)"/.exec(refused.html)?.[1] ?? '',
      method: 'totp',
      totpCode: totpAt(server, secret),
      captchaToken: await solved(t.slug),
    })
    assert.match(done.url, /\/account$/)
  })

  test('a form posted without an answer is refused on the page and creates nothing', async () => {
    const t = await withCaptcha({ provider: 'altcha', on: ['sign_up'] })
    const context = await fetch(`${server.url}/t/${t.slug}/sign-up`)
    const cookie = context.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ')
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await context.text())?.[1] ?? ''
    const res = await unchanged(server, t.tenantId, () =>
      fetch(`${server.url}/t/${t.slug}/sign-up`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email: uniqueEmail(), password: STRONG_PASSWORD }),
        redirect: 'manual',
      }),
    )
    assert.equal(res.status, 400)
    assert.match(await res.text(), /not a robot/)
  })
})
