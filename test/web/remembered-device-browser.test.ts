// Remembered devices on the hosted pages in Chromium (CONTRACT §21): a user of a tenant
// with mfaRememberDays ticks "Remember this device" on the second-factor page; the browser
// keeps an HttpOnly device cookie (only its hash is stored by the service), and its next
// password sign-in skips the second step; another browser is still asked; "Forget
// remembered devices" on the account page ends it (the cookie goes, and the next sign-in
// is asked again). Over https the cookie is `__Host-` prefixed and Secure (a PageClient
// against a server whose PUBLIC_URL is https). Screenshots at 1280 and 390 px.
// Needs /usr/bin/chromium; skipped without it.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { eq } from '../../src/db/orm.ts'
import { rememberedDevices } from '../../src/db/schema.ts'
import { hashToken } from '../../src/lib/crypto.ts'
import { launchChromium, screenshots, chromiumSkip as skip } from '../fixtures/browser.ts'
import { enrolTotp, totpAt } from '../fixtures/mfa.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startServer,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { PageClient } from './page-client.ts'

const SHOTS = '/tmp/shots-devices'
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

async function tenantWithUser(days: number) {
  const t = await createTenant(server)
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Optional', mfaRememberDays: days },
    { token: t.admin.accessToken },
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  const email = uniqueEmail('remember')
  const signed = await signup(server, t.slug, email)
  const secret = await enrolTotp(server, t.slug, signed.accessToken)
  return { t, email, secret, userId: signed.user.id as string }
}

async function signInWithPassword(page: Page, t: TenantFixture, email: string) {
  await page.goto(`${server.url}/t/${t.slug}/sign-in`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForLoadState('load')
}

test('Chromium: a remembered browser skips the second step until its devices are forgotten', {
  skip,
}, async () => {
  const { t, email, secret } = await tenantWithUser(30)
  const context = await browser.newContext()
  const page = await context.newPage()
  await signInWithPassword(page, t, email)
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor()
  const box = page.getByLabel('Remember this device for 30 days').first()
  assert.equal(await box.isChecked(), false, 'not ticked unless the person ticks it')
  await screenshots(page, 'second-factor-remember', SHOTS)
  await box.check()
  server.clock.advance(30)
  await page.getByLabel('Code from your authenticator app').fill(totpAt(server, secret))
  await page.getByRole('button', { name: 'Continue', exact: true }).first().click()
  await page.waitForURL(/\/account$/)

  const device = (await context.cookies()).find((c) => c.name === 'ta_device')
  assert.ok(device, 'the device cookie is set')
  assert.equal(device.httpOnly, true)
  assert.equal(device.sameSite, 'Lax')
  assert.equal(device.path, `/t/${t.slug}`)
  assert.ok(device.expires > Date.now() / 1000 + 29 * 86_400, 'kept for the 30 days')
  const rows = await server.deps.db
    .select()
    .from(rememberedDevices)
    .where(eq(rememberedDevices.tenantId, t.tenantId))
  assert.deepEqual(
    rows.map((r) => r.tokenHash),
    [hashToken(decodeURIComponent(device.value))],
    'the service keeps only its hash',
  )

  // Signed out and back in: no second step.
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.getByText('You are signed out').waitFor()
  await signInWithPassword(page, t, email)
  await page.waitForURL(/\/account$/)
  await page.getByRole('heading', { name: 'Remembered devices' }).waitFor()
  await screenshots(page, 'account-remembered-devices', SHOTS)

  // Another browser is asked.
  const other = await browser.newContext()
  const otherPage = await other.newPage()
  await signInWithPassword(otherPage, t, email)
  await otherPage.getByRole('heading', { name: 'Confirm it is you' }).waitFor()
  await other.close()

  // Forgotten from the account page: the cookie goes, and the next sign-in is asked.
  await page.getByRole('button', { name: 'Forget remembered devices' }).click()
  await page.getByText('Your remembered devices are forgotten').waitFor()
  assert.equal(
    (await context.cookies()).find((c) => c.name === 'ta_device'),
    undefined,
    'the cookie is cleared',
  )
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.getByText('You are signed out').waitFor()
  // Even the old token, put back, is no device now.
  await context.addCookies([{ ...device }])
  await signInWithPassword(page, t, email)
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor()
  await context.close()
})

test('a tenant that remembers no device shows no box and no account section', {
  skip,
}, async () => {
  const { t, email, secret } = await tenantWithUser(0)
  const client = new PageClient(server)
  await client.get(`/t/${t.slug}/sign-in`)
  const asked = await client.post(`/t/${t.slug}/sign-in`, { email, password: STRONG_PASSWORD })
  assert.match(asked.html, /Confirm it is you/)
  assert.doesNotMatch(asked.html, /rememberDevice/)
  server.clock.advance(30)
  // A forged box changes nothing: the tenant remembers no device.
  const done = await client.post(`/t/${t.slug}/sign-in/second-factor`, {
    pending: /name="pending" value="([^"]+)"/.exec(asked.html)?.[1] ?? '',
    method: 'totp',
    totpCode: totpAt(server, secret),
    rememberDevice: 'on',
  })
  assert.equal(done.status, 200, done.html.slice(0, 300))
  assert.doesNotMatch(done.html, /Remembered devices/)
  assert.equal(client.cookies.has('ta_device'), false)
})

test('over https the device cookie is __Host- prefixed, Secure and HttpOnly', {
  skip,
}, async (t) => {
  const secure = await startServer({ publicUrl: 'https://auth.example' })
  t.after(() => secure.close())
  const previous = server
  server = secure
  try {
    const { t: tenant, email, secret } = await tenantWithUser(7)
    const client = new PageClient(secure)
    await client.get(`/t/${tenant.slug}/sign-in`)
    const asked = await client.post(`/t/${tenant.slug}/sign-in`, {
      email,
      password: STRONG_PASSWORD,
    })
    assert.match(asked.html, /Remember this device for 7 days/)
    secure.clock.advance(30)
    await client.post(`/t/${tenant.slug}/sign-in/second-factor`, {
      pending: /name="pending" value="([^"]+)"/.exec(asked.html)?.[1] ?? '',
      method: 'totp',
      totpCode: totpAt(secure, secret),
      rememberDevice: 'on',
    })
    const line = client.setCookieLines.get(`__Host-ta_device_${tenant.slug}`) ?? ''
    assert.match(line, /; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=604800/)
  } finally {
    server = previous
  }
})
