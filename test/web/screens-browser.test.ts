// The screens a new user meets, at a desktop's 1280 px and a phone's 390 px, in a real
// browser (Debian's Chromium through playwright-core): nothing runs past the page's width
// on any console view or hosted page, the pieces sit where a person looks for them, and
// axe-core finds no violation. Long unbroken names (an address without a hyphen) are the
// case that widened the page. Screenshots of each go to SCREENSHOT_DIR (default
// test-results/screenshots/).
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import {
  checkAccessibility,
  launchChromium,
  RESULT_SHOTS,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import {
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TestServer,
  uniqueSlug,
} from '../helpers.ts'

const SHOTS = process.env.SCREENSHOT_DIR ?? RESULT_SHOTS
const WIDTHS = { desktop: 1280, phone: 390 } as const

/** Every console view, by its name in the navigation and its heading. */
const CONSOLE_VIEWS = [
  'Users',
  'Invites',
  'API keys',
  'Applications',
  'API resources',
  'Webhooks',
  'SSO',
  'Social sign-in',
  'Settings',
  'Audit log',
  'Identity provider',
] as const

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
  mkdirSync(SHOTS, { recursive: true })
})

after(async () => {
  if (skip) return
  await browser?.close()
})

/** An address with no hyphen or dot to break at before the @: the widest a line gets. */
function longEmail(prefix: string): string {
  return `${prefix}${Math.random().toString(36).slice(2, 10)}hamiltonapollo@rocketsincorporated.example`
}

/** A workspace with a long name whose admin has a long address, made through the API. */
async function longWorkspace() {
  const slug = uniqueSlug('rockets')
  const adminEmail = longEmail('margaret')
  const res = await server.request('POST', '/v1/tenants', {
    tenant: { slug, name: 'Acme Rockets Incorporated' },
    admin: { email: adminEmail, password: STRONG_PASSWORD },
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { slug, adminEmail, admin: res.body as { accessToken: string } }
}

/** How wide the page's content is, against the window: the page must not scroll sideways. */
function pageWidth(page: Page): Promise<{ content: number; window: number }> {
  return page.evaluate(() => ({
    content: document.scrollingElement?.scrollWidth ?? 0,
    window: window.innerWidth,
  }))
}

/**
 * At each width: no sideways scrolling, axe-core clean, a full-page screenshot. Back to the
 * desktop width after.
 */
async function check(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load')
  for (const [label, width] of Object.entries(WIDTHS)) {
    await page.setViewportSize({ width, height: 860 })
    const { content, window } = await pageWidth(page)
    assert.ok(content <= window, `${name} at ${width} px: the page is ${content} px wide`)
    await checkAccessibility(page, `${name} (${label})`)
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize({ width: WIDTHS.desktop, height: 860 })
}

/** The admin signs in to the console and lands on the users page. */
async function signInToConsole(page: Page, slug: string, email: string): Promise<void> {
  await page.goto(`${server.url}/console/?tenant=${slug}`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
}

/** The box of `locator` on the page. */
async function box(locator: Locator) {
  const b = await locator.boundingBox()
  assert.ok(b, `${locator} is shown`)
  return b
}

test('console: no view is wider than a 390 px phone, the header keeps Sign out in view; axe clean at both widths', {
  skip,
}, async () => {
  const w = await longWorkspace()
  const member = await signup(server, w.slug, longEmail('katherine'))
  const invited = await server.request(
    'POST',
    `/v1/${w.slug}/invites`,
    { email: longEmail('dorothy') },
    { token: w.admin.accessToken },
  )
  assert.equal(invited.status, 200, JSON.stringify(invited.body))
  const context = await browser.newContext({ viewport: { width: WIDTHS.phone, height: 860 } })
  const page = await context.newPage()
  await signInToConsole(page, w.slug, w.adminEmail)
  await page.getByRole('cell', { name: member.email }).first().waitFor()
  const signOut = page.getByRole('banner').getByRole('button', { name: 'Sign out' })
  for (const view of CONSOLE_VIEWS) {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: view, exact: true })
      .click()
    await page.getByRole('heading', { name: view, level: 1 }).waitFor()
    // The lists have loaded (a table's rows, the audit log's events) before measuring.
    await page.waitForLoadState('networkidle')
    await page.setViewportSize({ width: WIDTHS.phone, height: 860 })
    const button = await box(signOut)
    assert.ok(button.x + button.width <= WIDTHS.phone, `${view}: Sign out is in view`)
    await check(page, `console-${view.toLowerCase().replaceAll(' ', '-')}`)
  }
  await context.close()
})

test('API keys: the new key panel has Copy and Done side by side and is no wider than the list; axe clean at both widths', {
  skip,
}, async () => {
  const w = await longWorkspace()
  const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 860 } })
  const page = await context.newPage()
  await signInToConsole(page, w.slug, w.adminEmail)
  await page.getByRole('link', { name: 'API keys', exact: true }).click()
  await page.getByLabel('Name', { exact: true }).fill('CI')
  await page.getByRole('button', { name: 'Create key' }).click()
  const panel = page.getByRole('status').filter({ hasText: 'Copy the key now' })
  await panel.getByRole('code').waitFor()
  const table = page.getByRole('table', { name: 'API keys' })
  await table.getByRole('cell', { name: 'CI', exact: true }).waitFor()
  for (const width of Object.values(WIDTHS)) {
    await page.setViewportSize({ width, height: 860 })
    const copy = await box(panel.getByRole('button', { name: 'Copy' }))
    const done = await box(panel.getByRole('button', { name: 'Done' }))
    assert.equal(copy.y, done.y, `${width} px: Copy and Done on one line`)
    assert.ok(done.x > copy.x + copy.width, `${width} px: Done after Copy`)
    const shown = await box(panel)
    const list = await box(table)
    assert.ok(
      shown.width <= list.width + 0.5,
      `${width} px: the panel (${shown.width} px) is no wider than the list (${list.width} px)`,
    )
  }
  await check(page, 'console-api-key-created')
  await context.close()
})

test('users list: the signed-in admin’s own row offers no Suspend, Delete or Erase data; another user’s does', {
  skip,
}, async () => {
  const w = await longWorkspace()
  const member = await signup(server, w.slug, longEmail('katherine'))
  const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 860 } })
  const page = await context.newPage()
  await signInToConsole(page, w.slug, w.adminEmail)
  const rowOf = (email: string) => page.getByRole('row', { name: new RegExp(email) })
  await rowOf(member.email).getByRole('button', { name: 'Suspend' }).waitFor()
  for (const name of ['Suspend', 'Delete', 'Erase data']) {
    assert.equal(await rowOf(member.email).getByRole('button', { name }).count(), 1, name)
    assert.equal(await rowOf(w.adminEmail).getByRole('button', { name }).count(), 0, name)
  }
  // What the admin may still do on their own row: their sessions, their events.
  await rowOf(w.adminEmail).getByRole('button', { name: 'Sessions' }).waitFor()
  await rowOf(w.adminEmail)
    .getByRole('link', { name: /Audit events/ })
    .waitFor()
  await context.close()
})

/** What a screen reader says after the field's name: the texts its aria-describedby names. */
function descriptionOf(field: Locator): Promise<string> {
  return field.evaluate((el) =>
    (el.getAttribute('aria-describedby') ?? '')
      .split(' ')
      .map((id) => document.getElementById(id)?.textContent ?? '')
      .join(' '),
  )
}

test('landing page: the 12-character rule is under the password field before any submit; the first-administrator note sits above the form, not under the password label', {
  skip,
}, async () => {
  const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 860 } })
  const page = await context.newPage()
  await page.goto(`${server.url}/`)
  const password = page.getByLabel('Choose a password')
  assert.match(await descriptionOf(password), /At least 12 characters/)
  assert.doesNotMatch(await descriptionOf(password), /administrator/)
  const note = page.getByText('first administrator')
  const first = await box(page.getByLabel('Workspace name'))
  assert.ok((await box(note)).y < first.y, 'the note comes before the first field')
  await check(page, 'landing')
  await context.close()
})

/** Signs in on the hosted pages and lands on the account page. */
async function signInToAccount(page: Page, slug: string, email: string): Promise<void> {
  await page.goto(`${server.url}/t/${slug}/sign-in`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor()
}

test('account page at 390 px: a long address stays inside the card', { skip }, async () => {
  const w = await longWorkspace()
  const context = await browser.newContext({ viewport: { width: WIDTHS.phone, height: 860 } })
  const page = await context.newPage()
  await signInToAccount(page, w.slug, w.adminEmail)
  const card = await box(page.getByRole('main'))
  const address = await box(page.getByRole('definition').filter({ hasText: w.adminEmail }))
  assert.ok(
    address.x + address.width <= card.x + card.width,
    `the address ends at ${address.x + address.width} px, the card at ${card.x + card.width} px`,
  )
  await check(page, 'account')
  await context.close()
})

test('account page: one Sign out button; an admin has a link to the console with the workspace filled in, a member none', {
  skip,
}, async () => {
  const w = await longWorkspace()
  const member = await signup(server, w.slug, longEmail('katherine'))
  const context = await browser.newContext({ viewport: { width: WIDTHS.desktop, height: 860 } })
  const page = await context.newPage()
  await signInToAccount(page, w.slug, w.adminEmail)
  // Another session of the admin's elsewhere: ended by its own button, not "Sign out".
  const elsewhere = await server.request('POST', `/v1/${w.slug}/auth/login`, {
    email: w.adminEmail,
    password: STRONG_PASSWORD,
  })
  assert.equal(elsewhere.status, 200)
  await page.reload()
  const main = page.getByRole('main')
  assert.equal(await main.getByRole('button', { name: /sign out/i }).count(), 1)
  assert.equal(await main.getByRole('button', { name: 'Sign out', exact: true }).count(), 1)
  // The other two: the workspace's creation and the sign-in above.
  assert.equal(await main.getByRole('button', { name: /^End session/ }).count(), 2)
  const link = main.getByRole('link', { name: 'Admin console' })
  assert.equal(await link.getAttribute('href'), `/console/?tenant=${w.slug}`)
  await check(page, 'account-admin')
  await link.click()
  assert.equal(await page.getByLabel('Workspace').inputValue(), w.slug)
  await context.close()

  const memberContext = await browser.newContext()
  const memberPage = await memberContext.newPage()
  await signInToAccount(memberPage, w.slug, member.email)
  assert.equal(await memberPage.getByRole('link', { name: 'Admin console' }).count(), 0)
  await memberContext.close()
})
