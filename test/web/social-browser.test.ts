// Social sign-in on the hosted pages in Chromium (CONTRACT §19): the sign-in page shows the
// tenant's buttons in order (no request to a third party before the click: every request
// the page makes is to the service), "Continue with GitHub" goes to the provider (a local
// stand-in of GitHub's endpoints, test/fixtures/social.ts) and back, signed in to the account
// page; an address that an unconfirmed account holds ends on the "account exists" page; the
// account GitHub made has no password and sets a first one ("Set a password", after
// "Confirm it's you" and an emailed code once the proof is old).
// axe-core on each page; screenshots at 1280 and 390 px. Needs /usr/bin/chromium; skipped
// without it.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Locator } from 'playwright-core'
import { setTenant, userByEmail } from '../db.ts'
import {
  checkAccessibility,
  launchChromium,
  screenshots,
  chromiumSkip as skip,
} from '../fixtures/browser.ts'
import { type GitHubStandIn, startGitHubStandIn } from '../fixtures/social.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'

const SHOTS = '/tmp/shots-social'
const PUBLIC = 'http://auth.test'
let server: TestServer
let github: GitHubStandIn
let browser: Browser
let t: TenantFixture
let sink: SmtpSink

before(async () => {
  if (skip) return
  github = await startGitHubStandIn()
  sink = await new SmtpSink().start()
  server = await startServer({
    smtpUrl: sink.url,
    webhookAllowPrivate: true,
    socialProviderEndpoints: { github: github.endpoints },
  })
  t = await createTenant(server)
  for (const [body, order] of [
    [{ provider: 'github', ...github.addClient() }, 1],
    [{ provider: 'gitlab', clientId: 'gl', clientSecret: 's' }, 2],
    [{ provider: 'discord', clientId: 'dc', clientSecret: 's', name: 'Discord community' }, 3],
  ] as const) {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/social-connections`,
      { ...body, order },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  // The pages at PUBLIC_URL (auth.test), where the provider sends the browser back.
  browser = await launchChromium(new URL(server.url).port)
})
after(async () => {
  await browser?.close()
  await server?.close()
  await github?.close()
  await sink?.stop()
})

const hex = () => randomBytes(4).toString('hex')

test('Chromium: the buttons in order, and GitHub signs a new user in', { skip }, async () => {
  const context = await browser.newContext()
  const page = await context.newPage()
  const elsewhere: string[] = []
  page.on('request', (r) => {
    if (!r.url().startsWith(PUBLIC)) elsewhere.push(r.url())
  })
  await page.goto(`${PUBLIC}/t/${t.slug}/sign-in`)
  const labels = await page.locator('.social-buttons a').allTextContents()
  assert.deepEqual(
    labels.map((l) => l.trim()),
    ['GContinue with GitHub', 'GContinue with GitLab', 'DContinue with Discord community'],
  )
  assert.deepEqual(elsewhere, [], 'no request to a third party before the click')
  await checkAccessibility(page, 'sign-in with social buttons')
  await screenshots(page, 'sign-in-social', SHOTS)

  const email = `octo-${hex()}@example.org`
  github.nextAccount = {
    id: Number.parseInt(hex(), 16),
    login: 'octo',
    name: 'Octo Cat',
    emails: [{ email, primary: true, verified: true }],
  }
  await page.getByRole('link', { name: 'Continue with GitHub' }).click()
  await page.waitForURL(/\/account$/)
  assert.ok((await page.content()).includes(email), 'signed in as the GitHub user')
  // The account page lists the connected account and offers the others.
  await page.getByRole('heading', { name: 'Connected accounts' }).waitFor()
  assert.ok(await page.getByRole('button', { name: 'Connect GitLab' }).isVisible())
  assert.ok(await page.getByRole('button', { name: 'Remove GitHub' }).isVisible())
  await checkAccessibility(page, 'account after GitHub')
  await page.getByRole('heading', { name: 'Connected accounts' }).scrollIntoViewIfNeeded()
  await screenshots(page, 'account-connected', SHOTS)
  await context.close()
})

test('Chromium: an address an unconfirmed account holds ends on the "account exists" page', {
  skip,
}, async () => {
  const person = await signup(server, t.slug)
  github.nextAccount = {
    id: Number.parseInt(hex(), 16),
    login: 'someone',
    emails: [{ email: person.email, primary: true, verified: true }],
  }
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${PUBLIC}/t/${t.slug}/sign-in`)
  await page.getByRole('link', { name: 'Continue with GitHub' }).click()
  await page.getByRole('heading', { name: 'Signing in with that provider did not work' }).waitFor()
  assert.match(await page.locator('[role=alert]').innerText(), /already exists/)
  await checkAccessibility(page, 'social refusal')
  await screenshots(page, 'social-account-exists', SHOTS)
  await context.close()
})

/** One section of a page, at 1280 and 390 px (beside the whole page's screenshots). */
async function sectionShots(section: Locator, name: string) {
  mkdirSync(SHOTS, { recursive: true })
  const page = section.page()
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 800 })
    await section.screenshot({ path: join(SHOTS, `${name}-${width}.png`) })
  }
  await page.setViewportSize({ width: 1280, height: 800 })
}

test('Chromium: the account GitHub made sets a first password, after "Confirm it’s you" once the proof is old', {
  skip,
}, async () => {
  // A tenant of its own with emailed codes on: the prompt's way for an account without a password.
  const tenant = await createTenant(server)
  await setTenant(server, tenant.slug, { authPolicy: 'PasswordAndPasswordless' })
  const made = await server.request(
    'POST',
    `/v1/${tenant.slug}/social-connections`,
    { provider: 'github', ...github.addClient() },
    { token: tenant.admin.accessToken },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const email = `octo-${hex()}@example.org`
  github.nextAccount = {
    id: Number.parseInt(hex(), 16),
    login: 'octo',
    emails: [{ email, primary: true, verified: true }],
  }
  const context = await browser.newContext()
  const page = await context.newPage()
  await page.goto(`${PUBLIC}/t/${tenant.slug}/sign-in`)
  await page.getByRole('link', { name: 'Continue with GitHub' }).click()
  await page.waitForURL(/\/account$/)
  const section = page.locator('section', {
    has: page.getByRole('heading', { name: 'Set a password' }),
  })
  await section.scrollIntoViewIfNeeded()
  assert.equal(await section.getByLabel('Current password').count(), 0, 'no current password')
  assert.ok(await section.getByLabel('New password').isVisible())
  await checkAccessibility(page, 'account without a password')
  await screenshots(page, 'account-set-password', SHOTS)
  await sectionShots(section, 'account-set-password-section')

  server.clock.advance(11 * 60)
  try {
    await section.getByLabel('New password').fill('harbor-violet-engine-62')
    await section.getByRole('button', { name: 'Set password' }).click()
    await page.getByRole('heading', { name: "Confirm it's you" }).waitFor()
    assert.match((await page.locator('main').textContent()) ?? '', /Before you set a password/)
    assert.equal(await page.getByLabel('Password', { exact: true }).count(), 0)
    await checkAccessibility(page, 'confirm a first password')
    await screenshots(page, 'confirm-set-password', SHOTS)
    await server.deps.mailer.drain()
    const mails = sink.to(email).length
    await page.getByRole('button', { name: 'Email me a code' }).click()
    const code = await sink.codeAfter(email, mails)
    await page.getByLabel('Code we emailed you').fill(code)
    await page.getByRole('button', { name: 'Confirm with emailed code' }).click()
    await page.waitForURL(/done=password-set$/)
  } finally {
    server.clock.advance(-11 * 60)
  }
  assert.match((await page.locator('main').textContent()) ?? '', /Your password is set/)
  assert.ok(await page.getByRole('heading', { name: 'Password', exact: true }).isVisible())
  assert.ok(await page.getByLabel('Current password').isVisible(), 'now the change form')
  assert.notEqual((await userByEmail(server, tenant.tenantId, email))?.passwordHash ?? null, null)
  await checkAccessibility(page, 'account after a first password')
  await screenshots(page, 'account-password-set', SHOTS)
  await context.close()
})
