// CONTRACT §20, magic links, in Chromium: the link a person gets by mail signs in the
// browser that asked for it (its cookie goes with a navigation from outside, SameSite=Lax),
// and in another browser shows the code, which typed where the sign-in began signs in there.
// Each page no wider than a 390 px phone, axe clean, photographed at 1280 and 390 px (the
// code page in Arabic too, right to left). Needs /usr/bin/chromium; skipped without it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import {
  checkAccessibility,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { createTenant, signup, startTestServer, type TestServer, uniqueEmail } from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'

let server: TestServer
let sink: SmtpSink
let browser: Browser

before(async (ctx) => {
  if (skip) return
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  browser = await launchChromium()
})
after(async () => {
  if (skip) return
  await browser?.close()
  await sink.stop()
})

/** Axe clean and no sideways scrolling at both widths, then photographed. */
async function look(page: Page, name: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 })
    const wide = await page.evaluate(() => document.scrollingElement?.scrollWidth ?? 0)
    assert.ok(wide <= width, `${name} at ${width} px is ${wide} px wide`)
    await checkAccessibility(page, `${name} at ${width} px`)
  }
  await screenshots(page, name)
}

async function linkFor(email: string, after: number): Promise<string> {
  const until = Date.now() + 5000
  for (;;) {
    const url = sink
      .to(email)
      .slice(after)
      .map((m) => /https?:\/\/\S+\/magic-link\?token=[^\s"<]+/.exec(m.text)?.[0])
      .find(Boolean)
    if (url) {
      const { pathname, search } = new URL(url)
      return `${server.url}${pathname}${search}`
    }
    assert.ok(Date.now() < until, `no link for ${email}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

test('Chromium: a link signs in the browser that asked; in another it shows the code, typed where it began', {
  skip,
}, async () => {
  const t = await createTenant(server)
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless', passwordlessMethod: 'both' },
    { token: t.admin.accessToken },
  )
  assert.equal(patched.status, 200)
  server.deps.tenants.forget(t.slug)
  const user = await signup(server, t.slug, uniqueEmail('chromium-magic'))

  const asking = await browser.newContext()
  const other = await browser.newContext()
  try {
    const page = await asking.newPage()
    await page.goto(`${server.url}/t/${t.slug}/sign-in`)
    await page.getByRole('link', { name: 'Email me a sign-in code or link' }).click()
    await page.getByRole('heading', { name: 'Sign in by email' }).waitFor()
    await look(page, 'magic-link-request')
    let before = sink.to(user.email).length
    await page.getByLabel('Email address').fill(user.email)
    await page.getByRole('button', { name: 'Email me a link' }).click()
    await page.getByText('we sent it a sign-in link').waitFor()
    await look(page, 'magic-link-sent')
    const first = await linkFor(user.email, before)

    // Opened in another browser: the code, and that browser is not signed in.
    const elsewhere = await other.newPage()
    await elsewhere.goto(first)
    await elsewhere.getByRole('heading', { name: 'Finish signing in where you asked' }).waitFor()
    const code = (await elsewhere.locator('.code-shown strong').textContent())?.trim() ?? ''
    assert.match(code, /^\d{6}$/)
    await look(elsewhere, 'magic-link-elsewhere')
    await elsewhere.goto(`${first}&lang=ar`)
    assert.equal(await elsewhere.getAttribute('html', 'dir'), 'rtl')
    await look(elsewhere, 'magic-link-elsewhere-ar')
    assert.equal(
      (await other.cookies()).some((c) => c.name.includes('ta_session')),
      false,
      'the other browser has no session',
    )

    // Typed where the sign-in began, the code signs that browser in.
    await page.getByLabel('6-digit code').fill(code)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(/\/account$/)
    // Spent: the link is refused now, in either browser (in English again: the picker's
    // `lang` is remembered).
    await elsewhere.goto(`${first}&lang=en`)
    await elsewhere.getByRole('heading', { name: 'This link no longer works' }).waitFor()
    await look(elsewhere, 'magic-link-refused')

    // A new link, opened in the browser that asked (after signing out), signs it in itself.
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.goto(`${server.url}/t/${t.slug}/sign-in/code`)
    before = sink.to(user.email).length
    await page.getByLabel('Email address').fill(user.email)
    await page.getByRole('button', { name: 'Email me a link' }).click()
    await page.getByText('we sent it a sign-in link').waitFor()
    const second = await linkFor(user.email, before)
    const opened = await asking.newPage()
    await opened.goto(second)
    await opened.waitForURL(/\/account$/)
    assert.ok((await asking.cookies()).some((c) => c.name.includes('ta_session')))
  } finally {
    await asking.close()
    await other.close()
  }
})
