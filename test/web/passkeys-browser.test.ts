// Passkeys on the hosted pages, in Chromium with a virtual authenticator: added from the
// account page, listed, used to sign in from the sign-in page, removed. WebAuthn needs a
// secure context and a domain RP ID, so the pages are reached at http://localhost:<port>
// (PUBLIC_URL): test/fixtures/secure-origin.ts.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { chromiumSkip } from '../fixtures/browser.ts'
import {
  launchChromium,
  pageWithAuthenticator,
  startBehindLocalhost,
} from '../fixtures/secure-origin.ts'
import { createTenant, STRONG_PASSWORD, signup } from '../helpers.ts'

test('a passkey is added on the account page, signs in from the sign-in page, and is removed', {
  skip: chromiumSkip,
}, async (t) => {
  const { server, publicUrl } = await startBehindLocalhost(t)
  const tenant = await createTenant(server, { name: 'Hooli' })
  const user = await signup(server, tenant.slug)
  const { page } = await pageWithAuthenticator(await launchChromium(t))

  await page.goto(`${publicUrl}/t/${tenant.slug}/sign-in`)
  await page.fill('#email', user.email)
  await page.fill('#password', STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL(/\/account$/)

  // Add a passkey: the browser's ceremony, the service's verification.
  await page.fill('#passkey-name', 'Work laptop')
  await page.getByRole('button', { name: 'Add a passkey' }).click()
  await page.waitForURL(/done=passkey/)
  assert.match((await page.locator('.notice').textContent()) ?? '', /Your passkey is added/)
  assert.match((await page.locator('.items.passkeys').textContent()) ?? '', /Work laptop/)

  // Sign out; sign in with the passkey alone (a discoverable credential, no email).
  await page.getByRole('button', { name: 'Sign out', exact: true }).click()
  await page.waitForSelector('text=You are signed out')
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
  await page.waitForURL(/\/account$/)
  assert.match((await page.locator('main').textContent()) ?? '', new RegExp(user.email))
  const audit = await server.request(
    'GET',
    `/v1/${tenant.slug}/audit?action=UserLogin`,
    undefined,
    {
      token: tenant.admin.accessToken,
    },
  )
  assert.equal(audit.body.items[0].metadata.method, 'passkey')

  // Remove it.
  await page.getByRole('button', { name: 'Remove passkey Work laptop' }).click()
  await page.waitForURL(/done=passkey-removed/)
  assert.equal(await page.locator('.items.passkeys').count(), 0)
  const listed = await server.request('GET', `/v1/${tenant.slug}/me/passkeys`, undefined, {
    token: user.accessToken,
  })
  assert.deepEqual(listed.body.items, [])
})

test('step-up: with an old sign-in, adding a passkey asks "Confirm it\'s you" (the password), then adds it; removing it is confirmed with the passkey', {
  skip: chromiumSkip,
}, async (t) => {
  const { server, publicUrl } = await startBehindLocalhost(t)
  const tenant = await createTenant(server, { name: 'Hooli' })
  const user = await signup(server, tenant.slug)
  const { page } = await pageWithAuthenticator(await launchChromium(t))
  await page.goto(`${publicUrl}/t/${tenant.slug}/sign-in`)
  await page.getByLabel('Email address').fill(user.email)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
  await page.waitForURL(/\/account$/)
  // The sign-in is older than the 10 minutes of a recent proof (CONTRACT §16).
  server.clock.advance(11 * 60)

  // Adding a passkey: the script is sent to the prompt, and back to the ceremony.
  await page.getByLabel('Name for a new passkey (optional)').fill('Work laptop')
  await page.getByRole('button', { name: 'Add a passkey' }).click()
  await page.getByRole('heading', { name: "Confirm it's you", level: 1 }).waitFor()
  assert.match((await page.getByRole('main').textContent()) ?? '', /Before you add a passkey/)
  await page.getByLabel('Your password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Confirm with password' }).click()
  await page.waitForURL(/done=passkey/)
  assert.match((await page.locator('.items.passkeys').textContent()) ?? '', /Work laptop/)

  // Removing it after the window closed again: confirmed with the passkey itself.
  server.clock.advance(11 * 60)
  await page.getByRole('button', { name: 'Remove passkey Work laptop' }).click()
  await page.getByRole('heading', { name: "Confirm it's you", level: 1 }).waitFor()
  assert.match((await page.getByRole('main').textContent()) ?? '', /Before you remove a passkey/)
  await page.getByRole('button', { name: 'Confirm with a passkey' }).click()
  await page.waitForURL(/done=passkey-removed/)
  assert.equal(await page.locator('.items.passkeys').count(), 0)
  const listed = await server.request('GET', `/v1/${tenant.slug}/me/passkeys`, undefined, {
    token: user.accessToken,
  })
  assert.deepEqual(listed.body.items, [])
})
