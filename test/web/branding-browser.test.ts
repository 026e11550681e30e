// A tenant's branding in Chromium (CONTRACT §20): the console's Branding section saves it
// (a colour too light for white text is refused there with nothing changed); the hosted
// pages then draw the tenant's colour, dark when the branding says dark or, under auto,
// when the browser prefers it, with the links under the page; axe finds nothing on the dark
// pages (their contrast included) and the CSP reports nothing. Screenshots at 1280 and
// 390 px in /tmp/shots-branding. Needs /usr/bin/chromium; skipped without it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { unchanged } from '../db.ts'
import {
  checkAccessibility,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { consoleOf } from '../fixtures/console.ts'
import { createTenant, startTestServer, type TestServer } from '../helpers.ts'

const SHOTS = '/tmp/shots-branding'
let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
})

const styleOf = (page: Page, selector: string, property: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((el, p) => getComputedStyle(el).getPropertyValue(p), property)

test('the console saves the branding (a too-light colour refused); the pages draw it, light and dark, axe clean', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const record = async () =>
    (
      await server.request('GET', `/v1/${tenant.slug}/tenant`, undefined, {
        token: tenant.admin.accessToken,
      })
    ).body.branding
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'Settings', exact: true }).click()
    const section = page.getByRole('region', { name: 'Branding' })
    await section.waitFor()
    await section.getByLabel('Buttons and links colour').fill('#ffd54f')
    await unchanged(server, tenant.tenantId, async () => {
      await section.getByRole('button', { name: 'Save branding' }).click()
      await section.getByRole('alert').waitFor()
    })
    assert.match((await section.getByRole('alert').textContent()) ?? '', /contrast/)
    await section.getByLabel('Buttons and links colour').fill('#7a1fa2')
    await section.getByLabel('Privacy policy (https URL)').fill('https://globex.example/privacy')
    await section.getByLabel('Support email address').fill('help@globex.example')
    await section.getByRole('button', { name: 'Save branding' }).click()
    await section.getByText('Branding saved.').waitFor()
    const saved = await record()
    assert.equal(saved.primaryColor, '#7a1fa2')
    assert.equal(saved.darkMode, 'auto')
    assert.equal(saved.privacyPolicyUrl, 'https://globex.example/privacy')
    await section.scrollIntoViewIfNeeded()
    await screenshots(page, 'console-branding', SHOTS)
  } finally {
    await context.close()
  }

  for (const scheme of ['light', 'dark'] as const) {
    const pages = await browser.newContext({ colorScheme: scheme })
    const tab = await pages.newPage()
    const problems: string[] = []
    tab.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text())
    })
    try {
      await tab.goto(`${server.url}/t/${tenant.slug}/sign-in`)
      const button = await styleOf(tab, 'button.primary', 'background-color')
      assert.equal(button, 'rgb(122, 31, 162)', 'the primary button is the tenant’s colour')
      const background = await styleOf(tab, 'html', 'background-color')
      const expected = scheme === 'dark' ? 'rgb(17, 20, 27)' : 'rgb(244, 245, 248)'
      assert.equal(background, expected, `auto follows the browser (${scheme})`)
      await tab.getByRole('link', { name: 'Privacy policy' }).waitFor()
      await tab.getByRole('link', { name: 'Support: help@globex.example' }).waitFor()
      await checkAccessibility(tab, `sign-in, ${scheme}`)
      await screenshots(tab, `sign-in-${scheme}`, SHOTS)
      assert.deepEqual(problems, [], 'no script error, no CSP violation')
    } finally {
      await pages.close()
    }
  }

  // darkMode dark: dark whatever the browser prefers.
  const patched = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { branding: { primaryColor: '#7a1fa2', darkMode: 'dark' } },
    { token: tenant.admin.accessToken },
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  const forced = await browser.newContext({ colorScheme: 'light' })
  try {
    const tab = await forced.newPage()
    await tab.goto(`${server.url}/t/${tenant.slug}/sign-up`)
    assert.equal(await styleOf(tab, 'html', 'background-color'), 'rgb(17, 20, 27)')
    await checkAccessibility(tab, 'sign-up, dark')
    await screenshots(tab, 'sign-up-forced-dark', SHOTS)
  } finally {
    await forced.close()
  }
})
