// The landing page at `/` in a real browser (Debian's Chromium through playwright-core), as
// a person who just ran `npm start` uses it: reads it, fills the form by keyboard, sees a
// refused password beside its field, corrects it and arrives signed in on the new
// workspace's account page. Each state is checked with axe-core (no violations) and
// photographed at desktop and phone widths into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import {
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from '../helpers.ts'

const CHROMIUM = '/usr/bin/chromium'
const SHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots')
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: apt-get install -y chromium`

const VIEWPORTS = {
  desktop: { width: 1280, height: 860 },
  phone: { width: 390, height: 844 },
} as const

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
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
})

/** axe-core on the page as it is now: no violations (WCAG 2.2 A and AA, best practices). */
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
}

async function visit(page: Page, name: string): Promise<void> {
  await page.waitForLoadState('load')
  await checkAccessibility(page, name)
  for (const [width, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size)
    await checkAccessibility(page, `${name} (${width})`)
    await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true })
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

test('landing page: read, create a workspace by keyboard, a weak password shown by its field, then signed in; axe clean at both widths', {
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
  await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor()
  assert.equal(new URL(page.url()).pathname, `/t/${slug}/account`)
  assert.deepEqual(errors, [], 'no script errors and no CSP refusals')
  await context.close()
})
