// The device flow's user-code page is no guessing oracle (RFC 8628 §5.1; issue 36 P1):
// every code entered at {issuer}/device that finds no pending device authorization takes a
// point of RATE_LIMIT_DEVICE_USER_CODES per client address and one of
// RATE_LIMIT_DEVICE_USER_CODES_PER_TENANT per tenant, across addresses (what bounds the
// guesses any one device code meets); past either the page answers 429 with Retry-After,
// for a right code too, and looks nothing up. A right code gives its points back, so people
// entering the codes shown never spend the budgets. And the device's polling is paced
// (RFC 8628 §3.5): a pending device code polled faster than the announced interval is
// answered slow_down.
//
// Addresses are random (randomIp): with REDIS_URL the per-address buckets outlive the test
// server, and fixed ones would be spent by the previous run for the budget's ten minutes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as client from 'openid-client'
import { createApplication, oauthError, oidcClient } from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { hiddenValue, PageClient, textOf } from '../../../test/web/page-client.ts'

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'

/** A tenant with a native application, and a device that has asked for its codes. */
async function deviceOf(server: TestServer, name = 'Living Room TV') {
  const tenant = await createTenant(server)
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name,
    type: 'native',
    redirectUris: ['com.example.tv:/callback'],
  })
  const config = await oidcClient(server, tenant.slug, made.application.clientId)
  const device = await client.initiateDeviceAuthorization(config, { scope: 'openid' })
  return { tenant, config, device }
}

/** The person (or the guesser) at `browser` types `userCode` on the tenant's device page. */
async function enter(browser: PageClient, slug: string, userCode: string) {
  const path = `/oidc/${slug}/device`
  const form = await browser.get(path)
  assert.equal(form.status, 200, textOf(form.html))
  return browser.send(
    'POST',
    path,
    new URLSearchParams({
      xsrf: hiddenValue(form.html, 'xsrf') ?? '',
      user_code: userCode,
    }).toString(),
  )
}

/** One poll of the token endpoint, as the device makes it: its answer's error. */
function poll(config: client.Configuration, deviceCode: string) {
  return oauthError(client.genericGrantRequest(config, DEVICE_CODE, { device_code: deviceCode }))
}

test('wrong user codes are limited per client address: past the budget 429 with Retry-After, a right code from elsewhere still works', async (t) => {
  const server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, deviceUserCodes: { points: 3, seconds: 600 } },
  })
  const { tenant, config, device } = await deviceOf(server)

  const guesser = new PageClient(server, randomIp())
  for (const guess of ['BCDF-GHJK', 'BCDF-GHJL', 'BCDF-GHJM']) {
    const page = await enter(guesser, tenant.slug, guess)
    assert.equal(page.status, 400)
    assert.match(textOf(page.html), /That code is not right/)
  }
  // Past the budget: refused, the right code included, before any lookup.
  for (const guess of ['BCDF-GHJN', device.user_code]) {
    const refused = await enter(guesser, tenant.slug, guess)
    assert.equal(refused.status, 429)
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    assert.match(textOf(refused.html), /Too many codes were tried from your network/)
    assert.doesNotMatch(textOf(refused.html), /Living Room TV/)
    assert.equal(refused.headers.get('x-frame-options'), 'DENY')
    // Typed in on another device, which no application's window waits on.
    assert.equal(refused.headers.get('cross-origin-opener-policy'), 'same-origin')
  }
  // Nothing was granted or refused on the device's side.
  assert.equal((await poll(config, device.device_code)).error, 'authorization_pending')

  // The person at another address enters the right code, more often than the budget: each
  // gives its point back.
  const person = new PageClient(server, randomIp())
  for (let i = 0; i < 4; i++) {
    const confirm = await enter(person, tenant.slug, device.user_code)
    assert.equal(confirm.status, 200, textOf(confirm.html))
    assert.match(textOf(confirm.html), /Sign in to Living Room TV on your device\?/)
  }
})

test('wrong user codes are limited per tenant across addresses: guesses spread over many addresses close that tenant’s device page (429, a right code too), not another tenant’s, and spend no address’s budget while refused', async (t) => {
  const server = await startTestServer(t, {
    limits: {
      ...GENEROUS_LIMITS,
      deviceUserCodes: { points: 2, seconds: 600 },
      deviceUserCodesPerTenant: { points: 4, seconds: 600 },
    },
  })
  const target = await deviceOf(server)
  const other = await deviceOf(server, 'Kitchen Radio')

  // Right codes give the tenant's points back: more of them than its budget all pass.
  const person = new PageClient(server, randomIp())
  for (let i = 0; i < 5; i++) {
    const confirm = await enter(person, target.tenant.slug, target.device.user_code)
    assert.equal(confirm.status, 200, textOf(confirm.html))
  }

  // Two addresses, each within its own budget of two, spend the tenant's four.
  for (const guesser of [new PageClient(server, randomIp()), new PageClient(server, randomIp())]) {
    for (const guess of ['BCDF-GHJK', 'BCDF-GHJL']) {
      const page = await enter(guesser, target.tenant.slug, guess)
      assert.equal(page.status, 400, textOf(page.html))
      assert.match(textOf(page.html), /That code is not right/)
    }
  }

  // A fresh address now: refused at that tenant's page, the right code included, before
  // any lookup, three times over (more than its own budget of two).
  const fresh = new PageClient(server, randomIp())
  for (const guess of ['BCDF-GHJM', target.device.user_code, target.device.user_code]) {
    const refused = await enter(fresh, target.tenant.slug, guess)
    assert.equal(refused.status, 429)
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    assert.match(textOf(refused.html), /Too many codes were tried on this page lately/)
    assert.doesNotMatch(textOf(refused.html), /Living Room TV/)
  }
  assert.equal(
    (await poll(target.config, target.device.device_code)).error,
    'authorization_pending',
  )

  // The other tenant's page is open, and the refusals spent nothing of the fresh address's
  // own budget: two wrong codes are wrong (400), the third is past its budget.
  for (const guess of ['BCDF-GHJK', 'BCDF-GHJL']) {
    const page = await enter(fresh, other.tenant.slug, guess)
    assert.equal(page.status, 400, textOf(page.html))
  }
  const past = await enter(fresh, other.tenant.slug, other.device.user_code)
  assert.equal(past.status, 429)
  assert.match(textOf(past.html), /Too many codes were tried from your network/)
  const confirm = await enter(
    new PageClient(server, randomIp()),
    other.tenant.slug,
    other.device.user_code,
  )
  assert.equal(confirm.status, 200, textOf(confirm.html))
  assert.match(textOf(confirm.html), /Sign in to Kitchen Radio on your device\?/)
})

test('a pending device code polled faster than the announced interval is answered slow_down (RFC 8628 §3.5), per device code; at the interval, pending again; a refusal still comes through', async (t) => {
  const server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, deviceCodePolls: { points: 1, seconds: 2 } },
  })
  const { tenant, config, device } = await deviceOf(server)
  // RFC 8628 §3.2: the interval the budget allows is announced.
  assert.equal(device.interval, 2)
  const second = await client.initiateDeviceAuthorization(config, { scope: 'openid' })

  assert.equal((await poll(config, device.device_code)).error, 'authorization_pending')
  const fast = await poll(config, device.device_code)
  assert.deepEqual(fast, { error: 'slow_down', status: 400 })
  // Another device code has a pace of its own; a junk one is no pending code.
  assert.equal((await poll(config, second.device_code)).error, 'authorization_pending')
  assert.equal((await poll(config, 'junk-device-code')).error, 'invalid_grant')

  await new Promise((resolve) => setTimeout(resolve, 2100))
  assert.equal((await poll(config, device.device_code)).error, 'authorization_pending')

  // The person cancels: the next poll, however soon, answers access_denied.
  const person = new PageClient(server, randomIp())
  const confirm = await enter(person, tenant.slug, device.user_code)
  assert.equal(confirm.status, 200, textOf(confirm.html))
  const cancelled = await person.send(
    'POST',
    `/oidc/${tenant.slug}/device`,
    new URLSearchParams({
      xsrf: hiddenValue(confirm.html, 'xsrf') ?? '',
      user_code: device.user_code,
      abort: 'yes',
    }).toString(),
  )
  assert.match(textOf(cancelled.html), /Cancelled/)
  assert.equal((await poll(config, device.device_code)).error, 'access_denied')
})
