// The sign-in page in Arabic and Japanese in a real browser (Debian's Chromium through
// playwright-core), at a desktop's 1280 px and a phone's 390 px (CONTRACT §20): the Arabic
// page is laid out right to left (its heading and labels start at the card's right edge,
// the picker reads from the right), nothing runs past the page's width, axe-core finds no
// violation, and the picker is reached with the keyboard. Screenshots go to SCREENSHOT_DIR
// (default /tmp/shots). Needs /usr/bin/chromium; skipped without it. Glyphs need fonts with
// Arabic and Japanese (Debian fonts-noto-core, fonts-ipafont-gothic or fonts-noto-cjk).
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser } from 'playwright-core'
import {
  checkAccessibility,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
  TMP_SHOTS,
} from '../fixtures/browser.ts'
import { createTenant, startTestServer, type TestServer } from '../helpers.ts'

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx)
  browser = await launchChromium()
  mkdirSync(TMP_SHOTS, { recursive: true })
})

after(async () => {
  if (skip) return
  await browser?.close()
})

for (const [locale, width] of [
  ['ar', 1280],
  ['ar', 390],
  ['ja', 1280],
  ['ja', 390],
] as const) {
  test(`the sign-in page in ${locale} at ${width} px: ${locale === 'ar' ? 'mirrored' : 'left to right'}, no overflow, axe-clean`, {
    skip,
  }, async () => {
    const t = await createTenant(server, { name: locale === 'ar' ? 'أكمي' : 'アクメ' })
    const page = await browser.newPage({ viewport: { width, height: 900 } })
    try {
      await page.goto(new URL(`/t/${t.slug}/sign-in?lang=${locale}`, server.url).href)
      assert.equal(await page.getAttribute('html', 'dir'), locale === 'ar' ? 'rtl' : 'ltr')
      // Where the label's text sits in the card (the label is a block as wide as the card).
      const [fromLeft, fromRight] = await page.evaluate(() => {
        const card = document.querySelector('main.card')?.getBoundingClientRect()
        const label = document.querySelector('label[for="email"]')
        const range = document.createRange()
        range.selectNodeContents(label as Node)
        const text = range.getBoundingClientRect()
        return card ? [text.left - card.left, card.right - text.right] : [0, 0]
      })
      // A mirrored layout: the text starts at the card's right edge in Arabic, its left in Japanese.
      if (locale === 'ar')
        assert.ok(fromRight < fromLeft, `label at the right (${fromRight} < ${fromLeft})`)
      else assert.ok(fromLeft < fromRight, `label at the left (${fromLeft} < ${fromRight})`)
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      )
      assert.ok(overflow <= 0, `nothing wider than the page (${overflow} px over)`)
      await checkAccessibility(page, `sign-in ${locale} ${width}`)
      // The picker by keyboard: Tab reaches its links; Enter follows one.
      const picker = page.getByRole('navigation', { name: locale === 'ar' ? 'اللغة' : '言語' })
      await picker.getByRole('link', { name: 'English' }).focus()
      await page.keyboard.press('Enter')
      await page.waitForURL(/lang=en/)
      assert.equal(await page.getAttribute('html', 'lang'), 'en')
      await page.goto(new URL(`/t/${t.slug}/sign-in?lang=${locale}`, server.url).href)
      // Both widths (fixtures/browser.ts), once per language.
      if (width === 1280) await screenshots(page, `sign-in-${locale}`)
    } finally {
      await page.close()
    }
  })
}
