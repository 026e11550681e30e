// The device flow's user-code page is no guessing oracle (RFC 8628 §5.1; issue 36 P1):
// every code entered at {issuer}/device that finds no pending device authorization takes a
// point of RATE_LIMIT_DEVICE_USER_CODES per client address; past it the page answers 429
// with Retry-After, for a right code too, and looks nothing up. A right code gives its
// point back, so a person entering the code shown never spends the budget.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import * as client from 'openid-client'
import { createApplication, oauthError, oidcClient } from '../../../test/fixtures/oidc.ts'
import { createTenant, GENEROUS_LIMITS, startTestServer } from '../../../test/helpers.ts'
import { hiddenValue, PageClient, textOf } from '../../../test/web/page-client.ts'

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'

test('wrong user codes are limited per client address: past the budget 429 with Retry-After, a right code from elsewhere still works', async (t) => {
  const server = await startTestServer(t, {
    limits: { ...GENEROUS_LIMITS, deviceUserCodes: { points: 3, seconds: 600 } },
  })
  const tenant = await createTenant(server)
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'Living Room TV',
    type: 'native',
    redirectUris: ['com.example.tv:/callback'],
  })
  const config = await oidcClient(server, tenant.slug, made.application.clientId)
  const device = await client.initiateDeviceAuthorization(config, { scope: 'openid' })
  const path = `/oidc/${tenant.slug}/device`

  const enter = async (browser: PageClient, userCode: string) => {
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

  const guesser = new PageClient(server, '198.51.100.23')
  for (const guess of ['BCDF-GHJK', 'BCDF-GHJL', 'BCDF-GHJM']) {
    const page = await enter(guesser, guess)
    assert.equal(page.status, 400)
    assert.match(textOf(page.html), /That code is not right/)
  }
  // Past the budget: refused, the right code included, before any lookup.
  for (const guess of ['BCDF-GHJN', device.user_code]) {
    const refused = await enter(guesser, guess)
    assert.equal(refused.status, 429)
    assert.ok(Number(refused.headers.get('retry-after')) > 0)
    assert.match(textOf(refused.html), /Too many codes/)
    assert.doesNotMatch(textOf(refused.html), /Living Room TV/)
    assert.equal(refused.headers.get('x-frame-options'), 'DENY')
    // Typed in on another device, which no application's window waits on.
    assert.equal(refused.headers.get('cross-origin-opener-policy'), 'same-origin')
  }
  // Nothing was granted or refused on the device's side.
  const pending = await oauthError(
    client.genericGrantRequest(config, DEVICE_CODE, { device_code: device.device_code }),
  )
  assert.equal(pending.error, 'authorization_pending')

  // The person at another address enters the right code, more often than the budget: each
  // gives its point back.
  const person = new PageClient(server, '192.0.2.77')
  for (let i = 0; i < 4; i++) {
    const confirm = await enter(person, device.user_code)
    assert.equal(confirm.status, 200, textOf(confirm.html))
    assert.match(textOf(confirm.html), /Sign in to Living Room TV on your device\?/)
  }
})
