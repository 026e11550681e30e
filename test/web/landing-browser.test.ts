// The landing page at `/` in a real browser (Debian's Chromium through playwright-core), as
// a person who just ran `npm start` uses it: reads it, fills the form by keyboard, sees a
// refused password beside its field, corrects it and arrives signed in in the new
// workspace's console (and on its pages). Each state is checked with axe-core (no violations) and
// photographed at desktop and phone widths into test-results/screenshots/.
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
  startTestServer,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from '../helpers.ts'

const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  if (skip) return
  await browser?.close()
})

async function visit(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load')
  await checkAccessibility(page, name)
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size)
    await checkAccessibility(page, `${name} (${width})`)
    await page.screenshot({ path: join(RESULT_SHOTS, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize(VIEWPORTS.desktop)
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

test('landing page: read, create a workspace by keyboard, a weak password shown by its field, then signed in to the console; axe clean at both widths', {
  skip,
}, async () => {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  const errors: string[] = []
  // The form's 400 answer and the favicon's 404 are logged as failed loads: not errors here.
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) {
      errors.push(m.text())
    }
  })
  await page.goto(`${server.url}/`)
  await page.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor()
  assert.equal(
    await page.getByRole('link', { name: 'API reference' }).getAttribute('href'),
    '/docs',
  )
  assert.equal(
    await page.getByRole('link', { name: 'Admin console' }).getAttribute('href'),
    '/console/',
  )
  await visit(page, 'landing')

  const slug = uniqueSlug('acme')
  const email = uniqueEmail('founder')
  await typeInto(page, page.getByLabel('Workspace name'), 'Acme Rockets')
  await typeInto(page, page.getByLabel('Workspace address'), slug)
  await typeInto(page, page.getByLabel('Your email address'), email)
  await typeInto(page, page.getByLabel('Choose a password'), 'qwerty123456')
  await page.keyboard.press('Enter')
  await page.getByRole('alert').waitFor()
  const password = page.getByLabel('Choose a password')
  assert.match((await page.getByRole('alert').textContent()) ?? '', /too common/)
  assert.equal(await password.getAttribute('aria-invalid'), 'true')
  assert.equal(await page.getByLabel('Workspace address').inputValue(), slug)
  assert.equal(await password.inputValue(), '')
  await visit(page, 'landing-error')

  await typeInto(page, password, STRONG_PASSWORD)
  await page.keyboard.press('Enter')
  // Into the console, signed in (the one-time handoff), the handoff gone from the address.
  await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
  const landed = new URL(page.url())
  assert.equal(landed.pathname, '/console/')
  assert.equal(landed.hash, '')
  assert.doesNotMatch(await page.evaluate(() => JSON.stringify(window.history.state)), /handoff/)
  await page.getByRole('cell', { name: email, exact: true }).waitFor()
  await page.getByRole('banner').getByText('Acme Rockets').waitFor()
  await visit(page, 'landing-console')
  // Signed in to the workspace's pages as well.
  await page.goto(`${server.url}/t/${slug}/account`)
  await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor()
  assert.deepEqual(errors, [], 'no script errors and no CSP refusals')
  await context.close()
})
