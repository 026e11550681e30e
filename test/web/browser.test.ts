// The hosted pages in a real browser (Debian's Chromium through playwright-core), as a
// person uses them: an admin invites a user; the user opens the mailed link, chooses a
// password, sets up an authenticator app, signs out and back in with a code from it. Every
// page visited is checked with axe-core (no violations) and photographed at desktop and
// phone widths into test-results/screenshots/. Keyboard only where a person would type.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { b64, png } from '../fixtures/logos.ts'
import { totpAt } from '../fixtures/mfa.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: apt-get install -y chromium`

const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const

let server: TestServer
let sink: SmtpSink
let browser: Browser
/** axe results by page name, for the report at the end. */
const audited = new Map<string, number>()

before(async (ctx) => {
  if (skip) return
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  const { chromium } = await import('playwright-core')
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  mkdirSync(SHOTS, { recursive: true })
})

after(async () => {
  if (skip) return
  await browser?.close()
  await sink?.stop()
  const lines = [...audited].map(([name, rules]) => `${name}: 0 violations (${rules} rules passed)`)
  console.log(`axe-core ${readAxeVersion()}:\n  ${lines.join('\n  ')}`)
})

function readAxeVersion(): string {
  return /axe v([\d.]+)/.exec(AXE)?.[1] ?? '?'
}

/** axe-core on the page as it is now: no violations at all (WCAG 2.2 A and AA, best practices). */
async function checkAccessibility(page: Page, name: string): Promise<void> {
  await page.evaluate(AXE)
  const result = await page.evaluate(() =>
    // @ts-expect-error axe is the global the script just defined
    window.axe.run(document, { resultTypes: ['violations'] }),
  )
  const violations = (
    result as { violations: { id: string; help: string; nodes: { html: string }[] }[] }
  ).violations
  assert.deepEqual(
    violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.html).join(', ')})`),
    [],
    `${name}: axe-core violations`,
  )
  audited.set(name, (result as { passes: unknown[] }).passes.length)
}

/** Screenshots of the page at both widths, then back to desktop. */
async function photograph(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size)
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize(VIEWPORTS.desktop)
}

async function visit(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load')
  await checkAccessibility(page, name)
  await photograph(page, name)
}

/** Moves the focus with Tab until the element with `id` has it (keyboard only). */
async function tabTo(page: Page, id: string): Promise<void> {
  for (let i = 0; i < 30; i++) {
    if ((await page.evaluate(() => document.activeElement?.id)) === id) return
    await page.keyboard.press('Tab')
  }
  assert.fail(`#${id} cannot be reached with Tab`)
}

async function typeInto(page: Page, id: string, text: string): Promise<void> {
  await tabTo(page, id)
  await page.keyboard.type(text)
}

test('invited user: accept, set up an authenticator, sign out, sign back in with a code; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Acme Rockets' })
  const admin = tenant.admin.accessToken as string
  const logo = await server.request(
    'PUT',
    `/v1/${tenant.slug}/tenant/logo`,
    { mimeType: 'image/png', data: b64(png({ width: 64, height: 64 })) },
    { token: admin },
  )
  assert.equal(logo.status, 200, JSON.stringify(logo.body))
  await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { mfaPolicy: 'Optional' },
    { token: admin },
  )
  server.deps.tenants.forget(tenant.slug)

  // The admin signs in to the console and invites the user from it.
  const adminContext = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const console_ = await adminContext.newPage()
  await console_.goto(`${server.url}/console/?tenant=${tenant.slug}`)
  await typeInto(console_, 'email', tenant.adminEmail)
  await typeInto(console_, 'password', STRONG_PASSWORD)
  await console_.keyboard.press('Enter')
  await console_.waitForSelector('h1:has-text("Users")')
  await console_.waitForSelector(`td:has-text("${tenant.adminEmail}")`)
  await visit(console_, 'console-users')
  await console_.getByRole('link', { name: 'Invites' }).click()
  await console_.waitForSelector('h1:has-text("Invites")')
  const email = uniqueEmail('grace')
  const before = sink.to(email).length
  await typeInto(console_, 'invite-email', email)
  await console_.keyboard.press('Enter')
  const shownLink = (await console_.getByTestId('invite-link').textContent()) ?? ''
  assert.match(shownLink, new RegExp(`/t/${tenant.slug}/invite\\?token=`))
  await console_.waitForSelector(`td:has-text("${email}")`)
  await visit(console_, 'console-invites')

  // The mail holds the link to the invitation page.
  const mail = await sink.waitFor(email, before + 1)
  const mailed = mail.text.split('\n').find((line) => line.includes('/invite?token=')) ?? ''
  assert.ok(mailed.startsWith(`${server.deps.config.publicUrl}/t/${tenant.slug}/invite?token=`))
  // PUBLIC_URL of the tests names no host; the same path on the test server's address.
  const link = mailed.replace(server.deps.config.publicUrl, server.url)
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  const csp: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) csp.push(message.text())
  })

  // Accept: choose a password, by keyboard.
  await page.goto(link)
  assert.equal(await page.locator('h1').textContent(), 'Join Acme Rockets')
  assert.ok(await page.locator('img.logo').isVisible(), 'the tenant logo is shown')
  await visit(page, 'invite')
  await typeInto(page, 'password', 'short')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/invite$/)
  assert.match(
    (await page.locator('#password-error').textContent()) ?? '',
    /Use at least 12 characters/,
  )
  assert.equal(
    await page.evaluate(() => document.activeElement?.className),
    'error-summary',
    'the error summary takes the focus',
  )
  await visit(page, 'invite-error')
  await typeInto(page, 'password', STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/account$/)
  assert.match((await page.locator('main').textContent()) ?? '', new RegExp(email))
  await visit(page, 'account')

  // Set up the authenticator app from the account page.
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
  await page.waitForSelector('.qr svg')
  const secret = (await page.locator('code.secret').textContent()) ?? ''
  await visit(page, 'totp-setup')
  await typeInto(page, 'code', totpAt(server, secret))
  await page.keyboard.press('Enter')
  // With recovery codes (CONTRACT §9) they are shown once before the account page.
  await page.waitForSelector('.recovery-codes, .notice')
  if ((await page.locator('.recovery-codes li').count()) > 0) {
    assert.equal(await page.locator('.recovery-codes li').count(), 10)
    await visit(page, 'recovery-codes')
    await page.getByRole('link', { name: 'I have saved them' }).click()
  }
  await page.waitForURL(/\/account(\?|$)/)
  assert.match(
    (await page.locator('main').textContent()) ?? '',
    /An authenticator app protects your sign-ins/,
  )

  // Sign out, then back in with the password and a code from the app.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.waitForSelector('text=You are signed out')
  await visit(page, 'sign-in')
  await typeInto(page, 'email', email)
  await typeInto(page, 'password', STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForSelector('h1:has-text("Confirm it is you")')
  await visit(page, 'second-factor')
  server.clock.advance(30) // the enrolment's time step is spent
  await typeInto(page, 'totpCode', totpAt(server, secret))
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/account$/)

  // Pages never reveal tokens to scripts: the cookies are HttpOnly.
  assert.equal(await page.evaluate(() => document.cookie), '')
  const cookies = await context.cookies()
  assert.ok(cookies.length >= 2 && cookies.every((c) => c.httpOnly && c.sameSite === 'Lax'))
  assert.deepEqual(csp, [], 'no Content-Security-Policy violation')

  // The admin sees each step in the console's audit log (searched by the address).
  await console_.getByRole('link', { name: 'Audit log' }).click()
  await typeInto(console_, 'f-search', email)
  await console_.keyboard.press('Enter')
  await console_.waitForSelector('.events .action:text-is("UserLogin")')
  const shown = await console_.locator('.events .action').allTextContents()
  for (const action of ['InviteCreated', 'InviteAccepted', 'MfaTotpEnrolled', 'UserLogin']) {
    assert.ok(shown.includes(action), `${action} in the console: ${shown.join(', ')}`)
  }
  await console_.locator('.events summary').first().click()
  await visit(console_, 'console-audit')
  await adminContext.close()

  // The same, through the API: by the user's id and from the browser's address.
  const audit = await server.request('GET', `/v1/${tenant.slug}/audit?limit=100`, undefined, {
    token: admin,
  })
  const userId = audit.body.items.find(
    (e: { action: string }) => e.action === 'InviteAccepted',
  )?.userId
  assert.ok(userId)
  const steps = audit.body.items
    .filter((e: { userId: string }) => e.userId === userId)
    .map((e: { action: string }) => e.action)
    .reverse()
  for (const action of ['InviteAccepted', 'MfaTotpEnrolled', 'UserLogout', 'UserLogin']) {
    assert.ok(steps.includes(action), `${action} in ${steps.join(', ')}`)
  }
  const login = audit.body.items.find(
    (e: { action: string; userId: string }) => e.action === 'UserLogin' && e.userId === userId,
  )
  assert.match(login.userAgent, /Chrome/)
  await context.close()
})

test('sign-up, sign-in errors and the emailed-code pages are axe clean at both widths', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless' },
    { token: tenant.admin.accessToken },
  )
  server.deps.tenants.forget(tenant.slug)
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await page.goto(`${server.url}/t/${tenant.slug}/sign-in`)
  await typeInto(page, 'email', tenant.adminEmail)
  await typeInto(page, 'password', 'not-the-password-1')
  await page.keyboard.press('Enter')
  await page.waitForSelector('.error-summary')
  await visit(page, 'sign-in-error')
  await page.goto(`${server.url}/t/${tenant.slug}/sign-up`)
  await visit(page, 'sign-up')
  await page.goto(`${server.url}/t/${tenant.slug}/reset-password`)
  await visit(page, 'reset-password')
  await typeInto(page, 'email', tenant.adminEmail)
  await page.keyboard.press('Enter')
  await page.waitForSelector('h1:has-text("Choose a new password")')
  await visit(page, 'reset-password-code')
  await page.goto(
    `${server.url}/t/${tenant.slug}/verify-email?email=${encodeURIComponent(tenant.adminEmail)}`,
  )
  await visit(page, 'verify-email')
  await page.goto(`${server.url}/t/${tenant.slug}/sign-in/code`)
  await visit(page, 'code-request')
  await typeInto(page, 'email', tenant.adminEmail)
  await page.keyboard.press('Enter')
  await page.waitForSelector('h1:has-text("Check your email")')
  await visit(page, 'code-entry')
  await context.close()
})

test('console: users, API keys, settings with a logo, identity provider; axe clean at both widths', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const member = await signup(server, tenant.slug)
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
  await visit(page, 'console-sign-in')

  // A Member is turned away.
  await typeInto(page, 'email', member.email)
  await typeInto(page, 'password', STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForSelector('text=This console is for administrators')

  await page.fill('#email', tenant.adminEmail)
  await page.fill('#password', STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForSelector(`td:has-text("${member.email}")`)

  // Users: the member's sessions, one ended; another user erased.
  const memberRow = page.getByRole('row', { name: new RegExp(member.email) })
  await memberRow.getByRole('button', { name: 'Sessions' }).click()
  await page.getByRole('button', { name: 'End session' }).click()
  await page.waitForSelector('text=No live sessions.')
  const ended = await server.request('POST', `/v1/${tenant.slug}/auth/refresh`, {
    refreshToken: member.refreshToken,
  })
  assert.equal(ended.status, 401, 'the session ended from the console is over')
  await visit(page, 'console-user-sessions')
  const doomed = await signup(server, tenant.slug)
  await page.reload()
  await page.waitForSelector(`td:has-text("${doomed.email}")`)
  await page
    .getByRole('row', { name: new RegExp(doomed.email) })
    .getByRole('button', { name: 'Erase data' })
    .click()
  await page.getByRole('button', { name: 'Yes' }).click()
  await page.waitForSelector(`td:has-text("${doomed.email}")`, {
    state: 'detached',
    timeout: 15_000,
  })
  const erasedLogin = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: doomed.email,
    password: STRONG_PASSWORD,
  })
  assert.equal(erasedLogin.status, 401)

  // Users: make the member an Admin, suspend them, filter by address.
  await page.selectOption(`#role-${member.user.id}`, 'Admin')
  await page
    .getByRole('row', { name: new RegExp(member.email) })
    .getByRole('button', { name: 'Suspend' })
    .click()
  await page.waitForSelector(`tr:has-text("${member.email}") >> text=Suspended`)
  const row = await server.request('GET', `/v1/${tenant.slug}/users?limit=100`, undefined, {
    token: tenant.admin.accessToken,
  })
  const changed = row.body.items.find((u: { id: string }) => u.id === member.user.id)
  assert.equal(changed.role, 'Admin')
  assert.equal(changed.status, 'Suspended')
  await page.fill('#user-filter', member.email.slice(0, 8))
  assert.equal(await page.locator('tbody tr').count(), 1)

  // API keys: the secret is shown once.
  await page.getByRole('link', { name: 'API keys' }).click()
  await page.fill('#key-name', 'CI deploys')
  await page.getByRole('button', { name: 'Create key' }).click()
  const secret = (await page.getByTestId('api-key').textContent()) ?? ''
  assert.match(secret, /^ak_live_/)
  const byKey = await server.request('GET', `/v1/${tenant.slug}/users`, undefined, {
    token: secret,
  })
  assert.equal(byKey.status, 200, 'the key shown works')
  await page.waitForSelector('td:has-text("CI deploys")')
  await visit(page, 'console-api-keys')

  // Settings: a policy and a logo with its preview.
  await page.getByRole('link', { name: 'Settings' }).click()
  await page.waitForSelector('#mfa-policy')
  await page.selectOption('#mfa-policy', 'Optional')
  await page.check('#flag-requireVerifiedEmail')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page.waitForSelector('text=Saved.')
  await page.setInputFiles('#logo-file', {
    name: 'logo.png',
    mimeType: 'image/png',
    buffer: png({ width: 48, height: 48 }),
  })
  await page.waitForSelector('img[alt="New logo preview"]')
  await visit(page, 'console-settings')
  await page.getByRole('button', { name: 'Upload logo' }).click()
  await page.waitForSelector('img[alt="Current logo"]')
  const stored = await server.request('GET', `/v1/${tenant.slug}/tenant`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(stored.body.mfaPolicy, 'Optional')
  assert.equal(stored.body.requireVerifiedEmail, true)
  assert.ok(stored.body.logoUrl)

  // Identity provider credentials: stored, the secret never shown.
  await page.getByRole('link', { name: 'Identity provider' }).click()
  await page.fill('#idp-client', 'client-42')
  await page.fill('#idp-secret', 'very-secret-value')
  await page.getByRole('button', { name: 'Save credentials' }).click()
  await page.waitForSelector('text=Client client-42 is stored')
  assert.ok(!(await page.content()).includes('very-secret-value'))
  await visit(page, 'console-identity-provider')
  await context.close()
})
