// The hosted pages in a real browser (Debian's Chromium through playwright-core), as a
// person uses them: an admin invites a user; the user opens the mailed link, chooses a
// password, sets up an authenticator app, signs out and back in with a code from it. Every
// page visited is checked with axe-core (no violations) and photographed at desktop and
// phone widths into test-results/screenshots/. Keyboard only where a person would type.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { setUser } from '../db.ts'
import { expectError } from '../envelope.ts'
import {
  axeScript,
  launchChromium,
  checkAccessibility as noAxeViolations,
  RESULT_SHOTS,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { b64, png } from '../fixtures/logos.ts'
import { enrolTotp, totpAt } from '../fixtures/mfa.ts'
import {
  createTenant,
  eventually,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'

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
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  if (skip) return
  await browser?.close()
  await sink?.stop()
  const lines = [...audited].map(([name, rules]) => `${name}: 0 violations (${rules} rules passed)`)
  console.log(`axe-core ${readAxeVersion()}:\n  ${lines.join('\n  ')}`)
})

function readAxeVersion(): string {
  return /axe v([\d.]+)/.exec(axeScript())?.[1] ?? '?'
}

/** axe-core on the page as it is now: no violations at all, the rules passed kept for the report. */
async function checkAccessibility(page: Page, name: string): Promise<void> {
  audited.set(name, await noAxeViolations(page, name))
}

/** Screenshots of the page at both widths, then back to desktop. */
async function photograph(page: Page, name: string): Promise<void> {
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size)
    await page.screenshot({ path: join(RESULT_SHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize(VIEWPORTS.desktop)
}

async function visit(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load')
  await checkAccessibility(page, name)
  await photograph(page, name)
}

/** Moves the focus with Tab until `field` has it (keyboard only). */
async function tabTo(page: Page, field: Locator): Promise<void> {
  for (let i = 0; i < 30; i++) {
    if (await field.evaluate((el) => el === document.activeElement)) return
    await page.keyboard.press('Tab')
  }
  assert.fail(`${field} cannot be reached with Tab`)
}

async function typeInto(page: Page, field: Locator, text: string): Promise<void> {
  await tabTo(page, field)
  await page.keyboard.type(text)
}

/** What a screen reader says after the field's name: the texts its aria-describedby names. */
function descriptionOf(field: Locator): Promise<string> {
  return field.evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  )
}

/** The admin signs in to the console by keyboard and lands on the users page. */
async function signInToConsole(page: Page, tenant: TenantFixture): Promise<void> {
  await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
  await typeInto(page, page.getByLabel('Email address'), tenant.adminEmail)
  await typeInto(page, page.getByLabel('Password'), STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
}

/** The console's audit list and the action each shown event names (newest first). */
function auditList(page: Page) {
  const list = page.getByRole('list', { name: 'Audit events' })
  const events = list.getByRole('listitem')
  return {
    list,
    events,
    /** An event is shown as its action, then the address or user, then the time. */
    actions: async () => (await events.allInnerTexts()).map((text) => text.split(/\s/)[0]),
  }
}

/** Whether `wanted` occurs in `seen` in this order, others between allowed. */
function inOrder(seen: string[], wanted: string[]): boolean {
  let next = 0
  for (const action of seen) if (action === wanted[next]) next++
  return next === wanted.length
}

test('invited user: accept, set up an authenticator, sign out, sign back in with a code; the admin sees each step; axe clean', {
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
  await signInToConsole(console_, tenant)
  await console_.getByRole('cell', { name: tenant.adminEmail, exact: true }).waitFor()
  await visit(console_, 'console-users')
  await console_.getByRole('link', { name: 'Invites', exact: true }).click()
  await console_.getByRole('heading', { name: 'Invites', level: 1 }).waitFor()
  const email = uniqueEmail('grace')
  const before = sink.to(email).length
  await typeInto(console_, console_.getByLabel('Email address'), email)
  await console_.keyboard.press('Enter')
  const shownLink = (await console_.getByRole('status').getByRole('code').textContent()) ?? ''
  assert.match(shownLink, new RegExp(`/t/${tenant.slug}/invite\\?token=`))
  await console_.getByRole('cell', { name: email, exact: true }).waitFor()
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
  assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Join Acme Rockets')
  // The logo is decorative (the name follows it), so it is a presentation image.
  assert.ok(
    await page.getByRole('banner').getByRole('presentation').isVisible(),
    'the tenant logo is shown',
  )
  await visit(page, 'invite')
  const password = page.getByLabel('Choose a password')
  await typeInto(page, password, 'short')
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/invite$/)
  assert.match(await descriptionOf(password), /Use at least 12 characters/)
  assert.ok(
    await page.getByRole('alert').evaluate((el) => el === document.activeElement),
    'the error summary takes the focus',
  )
  await visit(page, 'invite-error')
  await typeInto(page, password, STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/account$/)
  assert.match((await page.getByRole('main').textContent()) ?? '', new RegExp(email))
  await visit(page, 'account')

  // Set up the authenticator app from the account page.
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
  const figure = page.getByRole('figure', { name: /^Key:/ })
  await figure.getByRole('img').waitFor()
  const secret = (await figure.getByRole('code').textContent()) ?? ''
  await visit(page, 'totp-setup')
  await typeInto(page, page.getByLabel('Code from the app'), totpAt(server, secret))
  await page.keyboard.press('Enter')
  // With recovery codes (CONTRACT §9) they are shown once before the account page.
  const codes = page.getByRole('heading', { name: 'Save your recovery codes' })
  await codes.or(page.getByRole('status')).waitFor()
  if (await codes.isVisible()) {
    assert.equal(await page.getByRole('main').getByRole('listitem').count(), 10)
    await visit(page, 'recovery-codes')
    await page.getByRole('link', { name: 'I have saved them' }).click()
  }
  await page.waitForURL(/\/account(\?|$)/)
  assert.match(
    (await page.getByRole('main').textContent()) ?? '',
    /An authenticator app protects your sign-ins/,
  )

  // Sign out, then back in with the password and a code from the app.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.getByText('You are signed out').waitFor()
  await visit(page, 'sign-in')
  await typeInto(page, page.getByLabel('Email address'), email)
  await typeInto(page, page.getByLabel('Password'), STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor()
  await visit(page, 'second-factor')
  server.clock.advance(30) // the enrolment's time step is spent
  await typeInto(page, page.getByLabel('Code from your authenticator app'), totpAt(server, secret))
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/account$/)

  // Pages never reveal tokens to scripts: the cookies are HttpOnly.
  assert.equal(await page.evaluate(() => document.cookie), '')
  const cookies = await context.cookies()
  assert.ok(cookies.length >= 2 && cookies.every((c) => c.httpOnly && c.sameSite === 'Lax'))
  assert.deepEqual(csp, [], 'no Content-Security-Policy violation')
  await context.close()

  // The admin sees each step in the console: the user's own events from their row on the
  // users page (a sign-out names no address to search by), oldest to newest.
  await console_.getByRole('link', { name: 'Users', exact: true }).click()
  await console_
    .getByRole('row', { name: new RegExp(email) })
    .getByRole('link', { name: 'Audit events' })
    .click()
  await console_.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor()
  const userId = await console_.getByLabel('User id').inputValue()
  const users = await server.request('GET', `/v1/${tenant.slug}/users?limit=100`, undefined, {
    token: admin,
  })
  assert.equal(userId, users.body.items.find((u: { email: string }) => u.email === email)?.id)
  const audit = auditList(console_)
  await audit.list.getByText('UserLogout', { exact: true }).waitFor()
  const steps = (await audit.actions()).reverse()
  const story = ['InviteAccepted', 'MfaTotpEnrolled', 'UserLogout', 'UserLogin']
  assert.ok(inOrder(steps, story), `${story.join(', ')} in ${steps.join(', ')}`)
  // The screen shows what the API answers for the user, no more and no less.
  const byUser = await server.request(
    'GET',
    `/v1/${tenant.slug}/audit?userId=${userId}&limit=50`,
    undefined,
    { token: admin },
  )
  assert.deepEqual(steps, byUser.body.items.map((e: { action: string }) => e.action).reverse())
  // The last sign-in, opened: from the user's Chromium.
  const login = audit.events.filter({ hasText: /^UserLogin\s/ }).first()
  await login.getByText('UserLogin', { exact: true }).click()
  await login.getByRole('definition').filter({ hasText: 'Chrome' }).waitFor()
  await visit(console_, 'console-audit')

  // The invitation names no user yet: searched by the address.
  await console_.getByLabel('User id').fill('')
  await typeInto(console_, console_.getByLabel('Search'), email)
  await console_.keyboard.press('Enter')
  await audit.list.getByText('InviteCreated', { exact: true }).waitFor()
  await adminContext.close()
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
  const email = page.getByLabel('Email address')
  await page.goto(`${server.url}/t/${tenant.slug}/sign-in`)
  await typeInto(page, email, tenant.adminEmail)
  await typeInto(page, page.getByLabel('Password'), 'not-the-password-1')
  await page.keyboard.press('Enter')
  await page.getByRole('alert').waitFor()
  await visit(page, 'sign-in-error')
  await page.goto(`${server.url}/t/${tenant.slug}/sign-up`)
  await visit(page, 'sign-up')
  await page.goto(`${server.url}/t/${tenant.slug}/reset-password`)
  await visit(page, 'reset-password')
  await typeInto(page, email, tenant.adminEmail)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor()
  await visit(page, 'reset-password-code')
  await page.goto(
    `${server.url}/t/${tenant.slug}/verify-email?email=${encodeURIComponent(tenant.adminEmail)}`,
  )
  await visit(page, 'verify-email')
  await page.goto(`${server.url}/t/${tenant.slug}/sign-in/code`)
  await visit(page, 'code-request')
  await typeInto(page, email, tenant.adminEmail)
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Check your email' }).waitFor()
  await visit(page, 'code-entry')
  await context.close()
})

test('step-up: an old sign-in is asked "Confirm it\'s you" before an authenticator is set up; a wrong password is shown by its field and changes nothing; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella' })
  const user = await signup(server, tenant.slug)
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await page.goto(`${server.url}/t/${tenant.slug}/sign-in`)
  await typeInto(page, page.getByLabel('Email address'), user.email)
  await typeInto(page, page.getByLabel('Password'), STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.waitForURL(/\/account$/)
  // The sign-in is older than the 10 minutes of a recent proof (CONTRACT §16).
  server.clock.advance(11 * 60)
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
  await page.getByRole('heading', { name: "Confirm it's you", level: 1 }).waitFor()
  await visit(page, 'confirm-it-is-you')
  const password = page.getByLabel('Your password')
  await typeInto(page, password, 'not-the-password-1')
  await page.keyboard.press('Enter')
  await page.getByRole('alert').waitFor()
  assert.match(await descriptionOf(password), /That password is not right/)
  assert.ok(
    await page.getByRole('alert').evaluate((el) => el === document.activeElement),
    'the error summary takes the focus',
  )
  await visit(page, 'confirm-it-is-you-error')
  const me = async () =>
    (await server.request('GET', `/v1/${tenant.slug}/me`, undefined, { token: user.accessToken }))
      .body
  assert.equal((await me()).totpEnrolled, false)
  // The right password: the enrolment the person asked for goes on.
  await typeInto(page, password, STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  const figure = page.getByRole('figure', { name: /^Key:/ })
  await figure.getByRole('img').waitFor()
  const secret = (await figure.getByRole('code').textContent()) ?? ''
  await typeInto(page, page.getByLabel('Code from the app'), totpAt(server, secret))
  await page.keyboard.press('Enter')
  await page
    .getByRole('heading', { name: 'Save your recovery codes' })
    .or(page.getByRole('status'))
    .waitFor()
  assert.equal((await me()).totpEnrolled, true)

  // Closing the account later: every way to confirm is offered, the app's code does it.
  await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless' },
    { token: tenant.admin.accessToken },
  )
  server.deps.tenants.forget(tenant.slug)
  server.clock.advance(11 * 60)
  await page.goto(`${server.url}/t/${tenant.slug}/account`)
  await typeInto(page, page.getByLabel('Type DELETE to confirm'), 'DELETE')
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: "Confirm it's you", level: 1 }).waitFor()
  for (const name of ['Confirm with password', 'Confirm with code', 'Email me a code']) {
    await page.getByRole('button', { name }).waitFor()
  }
  await page.getByText('Use a recovery code instead').click()
  await page.getByLabel('Recovery code').waitFor()
  await visit(page, 'confirm-it-is-you-every-way')
  await typeInto(page, page.getByLabel('Code from your authenticator app'), totpAt(server, secret))
  await page.keyboard.press('Enter')
  await page.getByRole('heading', { name: 'Your account is deleted' }).waitFor()
  await context.close()
})

test('console: users, API keys (create, revoke), settings with a logo, identity provider; axe clean at both widths', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const member = await signup(server, tenant.slug)
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
  await visit(page, 'console-sign-in')

  // A Member is turned away.
  await typeInto(page, page.getByLabel('Email address'), member.email)
  await typeInto(page, page.getByLabel('Password'), STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  await page.getByText('This console is for administrators').waitFor()

  await page.getByLabel('Email address').fill(tenant.adminEmail)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  const rowOf = (email: string) => page.getByRole('row', { name: new RegExp(email) })
  await page.getByRole('cell', { name: member.email, exact: true }).waitFor()

  // Users: the member's sessions, one ended; another user erased.
  const memberRow = rowOf(member.email)
  await memberRow.getByRole('button', { name: 'Sessions' }).click()
  await page.getByRole('button', { name: 'End session' }).click()
  await page.getByText('No live sessions.').waitFor()
  const ended = await server.request('POST', `/v1/${tenant.slug}/auth/refresh`, {
    refreshToken: member.refreshToken,
  })
  assert.equal(ended.status, 401, 'the session ended from the console is over')
  await visit(page, 'console-user-sessions')
  const doomed = await signup(server, tenant.slug)
  await page.reload()
  await rowOf(doomed.email).waitFor()
  await rowOf(doomed.email).getByRole('button', { name: 'Erase data' }).click()
  await rowOf(doomed.email).getByRole('button', { name: 'Yes' }).click()
  await rowOf(doomed.email).waitFor({ state: 'detached', timeout: 15_000 })
  const erasedLogin = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email: doomed.email,
    password: STRONG_PASSWORD,
  })
  assert.equal(erasedLogin.status, 401)

  // Users: make the member an Admin, suspend them, filter by address.
  await page.getByLabel(`Role of ${member.email}`).selectOption('Admin')
  await memberRow.getByRole('button', { name: 'Suspend' }).click()
  await memberRow.getByRole('cell', { name: 'Suspended', exact: true }).waitFor()
  const row = await server.request('GET', `/v1/${tenant.slug}/users?limit=100`, undefined, {
    token: tenant.admin.accessToken,
  })
  const changed = row.body.items.find((u: { id: string }) => u.id === member.user.id)
  assert.equal(changed.role, 'Admin')
  assert.equal(changed.status, 'Suspended')
  await page.getByLabel('Search by email').fill(member.email.slice(0, 8))
  const users = page.getByRole('table', { name: 'Users' })
  assert.equal(await users.getByRole('row').count(), 2, 'the heading row and the member')

  // API keys: the secret is shown once; revoked, it is refused.
  await page.getByRole('link', { name: 'API keys', exact: true }).click()
  await page.getByLabel('Name', { exact: true }).fill('CI deploys')
  await page.getByRole('button', { name: 'Create key' }).click()
  const secret = (await page.getByRole('status').getByRole('code').textContent()) ?? ''
  assert.match(secret, /^ak_live_/)
  const byKey = await server.request('GET', `/v1/${tenant.slug}/users`, undefined, {
    token: secret,
  })
  assert.equal(byKey.status, 200, 'the key shown works')
  await page.getByRole('cell', { name: 'CI deploys', exact: true }).waitFor()
  await visit(page, 'console-api-keys')
  await page.getByRole('button', { name: 'Done' }).click()
  await rowOf('CI deploys').getByRole('button', { name: 'Revoke' }).click()
  await rowOf('CI deploys').getByRole('button', { name: 'Yes' }).click()
  // The list shows live keys only (revoked ones are hidden by default): the row leaves it.
  await rowOf('CI deploys').waitFor({ state: 'detached' })
  expectError(
    await server.request('GET', `/v1/${tenant.slug}/users`, undefined, { token: secret }),
    401,
    'invalid_api_key',
  )

  // Settings: a policy and a logo with its preview.
  await page.getByRole('link', { name: 'Settings', exact: true }).click()
  await page.getByLabel('Second factor').selectOption('Optional')
  await page.getByLabel('Password sign-in needs a verified email address').check()
  // The protections of CONTRACT §21: remembered devices and breached passwords.
  await page.getByLabel('Remember devices (days)').fill('14')
  await page.getByLabel('Passwords found in breaches').selectOption('off')
  // CONTRACT §20: what the emailed sign-in sends.
  await page.getByLabel('What the emailed sign-in sends').selectOption('both')
  // The dry run of the draft (CONTRACT §21) answers before anything is saved.
  await page.getByRole('button', { name: 'Preview the effect on the last 30 days' }).click()
  await page.getByText(/sign-ins by \d+ users/).waitFor()
  const drafted = await server.request('GET', `/v1/${tenant.slug}/tenant`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(drafted.body.mfaPolicy, 'Disabled', 'a dry run saves nothing')
  await page.getByRole('button', { name: 'Save settings' }).click()
  await page.getByText('Saved.').waitFor()
  await page.getByLabel(/^Choose an image/).setInputFiles({
    name: 'logo.png',
    mimeType: 'image/png',
    buffer: png({ width: 48, height: 48 }),
  })
  await page.getByRole('img', { name: 'New logo preview' }).waitFor()
  await visit(page, 'console-settings')
  await page.getByRole('button', { name: 'Upload logo' }).click()
  await page.getByRole('img', { name: 'Current logo' }).waitFor()
  const stored = await server.request('GET', `/v1/${tenant.slug}/tenant`, undefined, {
    token: tenant.admin.accessToken,
  })
  assert.equal(stored.body.mfaPolicy, 'Optional')
  assert.equal(stored.body.requireVerifiedEmail, true)
  assert.equal(stored.body.mfaRememberDays, 14)
  assert.equal(stored.body.passwordlessMethod, 'both')
  assert.equal(stored.body.breachedPasswordPolicy, 'off')
  assert.ok(stored.body.logoUrl)

  // Identity provider credentials: stored, the secret never shown.
  await page.getByRole('link', { name: 'Identity provider', exact: true }).click()
  await page.getByLabel('Client ID').fill('client-42')
  await page.getByLabel('Client secret').fill('very-secret-value')
  await page.getByRole('button', { name: 'Save credentials' }).click()
  await page.getByText('Client client-42 is stored').waitFor()
  assert.ok(!(await page.content()).includes('very-secret-value'))
  await visit(page, 'console-identity-provider')
  await context.close()
})

test('console: reset an authenticator, delete a user, revoke an invite; the audit log filtered by action, scrolled and opened; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella' })
  const admin = tenant.admin.accessToken as string
  const enrolled = await signup(server, tenant.slug)
  await enrolTotp(server, tenant.slug, enrolled.accessToken)
  const doomed = await signup(server, tenant.slug)
  // Locked by the failure budgets (CONTRACT §21): until an hour from now.
  const locked = await signup(server, tenant.slug)
  await setUser(server, tenant.tenantId, locked.user.id, {
    lockedUntil: new Date(server.clock.now().getTime() + 3_600_000),
  })
  const invitee = uniqueEmail('invitee')
  const invite = await server.request(
    'POST',
    `/v1/${tenant.slug}/invites`,
    { email: invitee, role: 'Member' },
    { token: admin },
  )
  assert.equal(invite.status, 200, JSON.stringify(invite.body))
  // More TenantUpdated events than one page of the console's audit log (50) holds.
  const RENAMES = 55
  for (let i = 1; i <= RENAMES; i++) {
    const renamed = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/tenant`,
      { name: `Umbrella ${i}` },
      { token: admin },
    )
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body))
  }
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await signInToConsole(page, tenant)
  const rowOf = (email: string) => page.getByRole('row', { name: new RegExp(email) })

  // Users: the enrolled user's authenticator reset; the other user deleted.
  const enrolledRow = rowOf(enrolled.email)
  await enrolledRow.getByRole('button', { name: 'Reset authenticator' }).click()
  await enrolledRow.getByRole('button', { name: 'Yes' }).click()
  await enrolledRow.getByRole('button', { name: 'Reset authenticator' }).waitFor({
    state: 'detached',
  })
  assert.equal(await enrolledRow.getByRole('cell', { name: 'No', exact: true }).count(), 1)
  await rowOf(doomed.email).getByRole('button', { name: 'Delete' }).click()
  await rowOf(doomed.email).getByRole('button', { name: 'Yes' }).click()
  await rowOf(doomed.email).waitFor({ state: 'detached' })
  const users = await server.request('GET', `/v1/${tenant.slug}/users?limit=100`, undefined, {
    token: admin,
  })
  const listed = users.body.items.map((u: { email: string }) => u.email)
  assert.ok(!listed.includes(doomed.email), 'the deleted user is gone')
  assert.equal(
    users.body.items.find((u: { email: string }) => u.email === enrolled.email)?.totpEnrolled,
    false,
  )
  const login = (email: string) =>
    server.request('POST', `/v1/${tenant.slug}/auth/login`, { email, password: STRONG_PASSWORD })
  assert.equal((await login(enrolled.email)).status, 200, 'no code is asked for any more')
  assert.equal((await login(doomed.email)).status, 401)

  // Locked users only: the locked account alone, and Unlock clears it.
  await page.getByLabel('Locked users only').check()
  await rowOf(enrolled.email).waitFor({ state: 'detached' })
  await rowOf(locked.email)
    .getByRole('button', { name: /^Unlock/ })
    .click()
  await rowOf(locked.email).waitFor({ state: 'detached' })
  const listedNow = await server.request('GET', `/v1/${tenant.slug}/users?limit=100`, undefined, {
    token: admin,
  })
  const unlocked = listedNow.body.items.find((u: { id: string }) => u.id === locked.user.id)
  assert.equal(unlocked?.lockedUntil, null, 'unlocked')
  await page.getByLabel('Locked users only').uncheck()
  await rowOf(locked.email).waitFor()

  // Invites: the pending invitation revoked; its token no longer lets anyone in.
  await page.getByRole('link', { name: 'Invites', exact: true }).click()
  await rowOf(invitee).getByRole('button', { name: 'Revoke' }).click()
  await rowOf(invitee).getByRole('button', { name: 'Yes' }).click()
  await rowOf(invitee).waitFor({ state: 'detached' }) // the list holds pending ones
  expectError(
    await server.request('POST', '/v1/invites/accept', {
      token: invite.body.token,
      password: STRONG_PASSWORD,
    }),
    401,
    'invalid_invite',
  )

  // The audit log: the newest events are the console's own; scrolling loads the next page.
  await page.getByRole('link', { name: 'Audit log', exact: true }).click()
  const audit = auditList(page)
  await audit.list.getByText('InviteRevoked', { exact: true }).waitFor()
  for (const action of ['InviteRevoked', 'UserSoftDeleted', 'MfaTotpDisabled']) {
    assert.ok((await audit.actions()).includes(action), action)
  }
  assert.equal(await audit.events.count(), 50, 'one page at first')
  await page.mouse.wheel(0, 20_000)
  await eventually(async () => (await audit.events.count()) > 50)
  assert.ok((await audit.events.count()) > 50, 'the next page loaded on scrolling')

  // Filtered by action: only the renames, all of them after scrolling to the end.
  await page.getByLabel('Action').selectOption('TenantUpdated')
  await page.getByRole('button', { name: 'Apply' }).click()
  await audit.list.getByText('InviteRevoked', { exact: true }).waitFor({ state: 'detached' })
  await audit.events.first().waitFor()
  assert.equal(await audit.events.count(), 50)
  await page.mouse.wheel(0, 20_000)
  await eventually(async () => (await audit.events.count()) === RENAMES)
  assert.deepEqual(new Set(await audit.actions()), new Set(['TenantUpdated']))
  const renames = await server.request(
    'GET',
    `/v1/${tenant.slug}/audit?action=TenantUpdated&limit=100`,
    undefined,
    { token: admin },
  )
  assert.equal(renames.body.items.length, RENAMES)
  assert.equal(await audit.events.count(), RENAMES, 'every rename, and nothing else')
  assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0)

  // The newest rename opened: who did it, and the change in its metadata.
  const newest = audit.events.first()
  const change = newest.getByText(`"to": "Umbrella ${RENAMES}"`)
  assert.equal(await change.isVisible(), false, 'the metadata is folded away')
  await newest.getByText('TenantUpdated', { exact: true }).click()
  await change.waitFor()
  await newest.getByRole('definition').getByText(`user ${tenant.admin.user.id}`).waitFor()
  await page.mouse.wheel(0, -20_000)
  await visit(page, 'console-audit-filtered')
  await context.close()
})

test('console: the audit log shows a live user’s address beside its id, never a deleted one’s, and Export downloads the filtered events as NDJSON; axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const admin = tenant.admin.accessToken as string
  const live = await signup(server, tenant.slug)
  const gone = await signup(server, tenant.slug)
  for (const who of [live, gone]) {
    const res = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: who.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  const deleted = await server.request(
    'DELETE',
    `/v1/${tenant.slug}/users/${gone.user.id}`,
    undefined,
    { token: admin },
  )
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body))
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop, acceptDownloads: true })
  const page = await context.newPage()
  await signInToConsole(page, tenant)
  await page.getByRole('link', { name: 'Audit log', exact: true }).click()
  const audit = auditList(page)
  await page.getByLabel('Action').selectOption('UserLogin')
  await page.getByRole('button', { name: 'Apply' }).click()
  await eventually(async () => (await audit.events.count()) === 3)
  assert.deepEqual(await audit.actions(), ['UserLogin', 'UserLogin', 'UserLogin'])

  // A login's event names no address of its own: the live user's comes from the users.
  const ofLive = audit.events.filter({ hasText: live.email })
  assert.equal(await ofLive.count(), 1)
  await ofLive.getByText('UserLogin', { exact: true }).click()
  await ofLive.getByRole('definition').getByText(`${live.user.id} (${live.email})`).waitFor()
  assert.equal(await audit.list.getByText(gone.email).count(), 0, 'no deleted user’s address')
  const ofGone = audit.events.filter({ hasText: gone.user.id })
  assert.equal(await ofGone.count(), 1)
  await photograph(page, 'console-audit-people')
  for (const [label, size] of [
    ['1280', VIEWPORTS.desktop],
    ['390', VIEWPORTS.phone],
  ] as const) {
    await page.setViewportSize(size)
    await page.screenshot({ path: `/work/notes/screens/w14-audit-${label}.png`, fullPage: true })
  }
  await page.setViewportSize(VIEWPORTS.desktop)
  await checkAccessibility(page, 'console-audit-people')

  // Export: the applied filter's events, oldest first, as the API exports them.
  const [file] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Export', exact: true }).click(),
  ])
  assert.match(file.suggestedFilename(), new RegExp(`^audit-${tenant.slug}-.+\\.ndjson$`))
  const lines = readFileSync(await file.path(), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const api = await fetch(`${server.url}/v1/${tenant.slug}/audit/export?action=UserLogin`, {
    headers: { authorization: `Bearer ${admin}` },
  })
  const expected = (await api.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.equal(lines.length, 3)
  assert.deepEqual(lines, expected)
  assert.deepEqual(lines.map((l) => l.userId).slice(0, 2), [live.user.id, gone.user.id])
  assert.equal(lines.find((l) => l.userId === live.user.id)?.userEmail, live.email)
  assert.equal(lines.find((l) => l.userId === gone.user.id)?.userEmail, undefined)
  await context.close()
})
