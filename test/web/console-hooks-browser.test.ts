// The console's Hooks page (CONTRACT §21, issue 32) in a real browser (Debian's Chromium
// through playwright-core) against the real app, as an admin uses it, with a receiver on
// 127.0.0.1 (WEBHOOK_ALLOW_PRIVATE=true) whose answer the test chooses: a bad URL and a bad
// timeout are shown by their fields and change nothing; the secret is shown once and signs
// what the receiver gets; "Send a test call" shows each outcome (a deny with its message, a
// timeout, a 500, claims with the reserved ones dropped) and what a real call would do, and
// the last calls list the test calls beside a real sign-in's; disable, a settings change,
// the events still free offered at creation, deletion asked first. Every view is checked
// with axe-core, must not scroll sideways at phone width, and is photographed at desktop
// and phone widths into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { after, before, type TestContext, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, flagged, visit } from '../fixtures/console.ts'
import { receiver, verify } from '../fixtures/webhooks.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  server = await startTestServer(ctx, { webhookAllowPrivate: true })
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
})

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

/** Clicks the copy button and answers what it put on the clipboard. */
async function copied(page: Page): Promise<string> {
  await page.getByRole('button', { name: 'Copy secret', exact: true }).click()
  await page.getByRole('button', { name: 'Copied' }).first().waitFor()
  return page.evaluate(() => navigator.clipboard.readText())
}

type Mode = 'deny' | 'hang' | 'fail' | 'claims'

function answer(mode: Mode, res: ServerResponse, held: ServerResponse[]) {
  if (mode === 'hang') return void held.push(res)
  const [status, body] =
    mode === 'deny'
      ? [200, { decision: 'deny', message: 'Closed for maintenance.' }]
      : mode === 'fail'
        ? [500, { error: 'boom' }]
        : [200, { claims: { plan: 'pro', sub: 'someone-else' } }]
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
}

test('console hooks: bad fields shown where the API names them and nothing changed; the secret shown once signs the calls; each test call’s outcome shown and listed beside a real sign-in’s; disable, settings, the free events, delete; axe clean, no view wider than a phone', {
  skip,
}, async (t: TestContext) => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const member = await signup(server, tenant.slug)
  let mode: Mode = 'deny'
  const held: ServerResponse[] = []
  t.after(() => {
    for (const res of held) res.destroy()
  })
  const sink = await receiver(t, (_n, res) => answer(mode, res, held))
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'Hooks', exact: true }).click()
    await page.getByRole('heading', { name: 'Hooks', level: 1 }).waitFor()
    await page.getByText('No hooks yet').waitFor()
    await visit(page, 'console-hooks-empty')

    // A URL that is no URL, then a timeout under 100: each message at its field.
    const url = page.getByLabel('Endpoint URL')
    await url.fill('hooks.example.com/auth')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create hook' }).click()
      await page.getByText('not an absolute URL').waitFor()
    })
    await flagged(url, 'not an absolute URL')
    await url.fill(sink.url)
    const timeout = page.getByLabel('Timeout (milliseconds)')
    await timeout.fill('50')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create hook' }).click()
      await page.getByText('must be >= 100').waitFor()
    })
    await flagged(timeout, 'must be >= 100')
    assert.equal(await url.getAttribute('aria-invalid'), null, 'the URL is right now')
    assert.equal((await getJson(tenant, '/hooks')).body.items.length, 0)

    // before_sign_in, waiting a second, refusing on failure (its default).
    await page.getByLabel('Event', { exact: true }).selectOption('before_sign_in')
    await timeout.fill('1000')
    assert.ok(await page.getByLabel('Refused (deny)').isChecked(), 'the event’s default')
    await page.getByRole('button', { name: 'Create hook' }).click()
    await page.getByRole('heading', { name: 'Before sign-in before_sign_in', level: 2 }).waitFor()
    const [stored] = (await getJson(tenant, '/hooks')).body.items
    assert.deepEqual(
      [stored.event, stored.url, stored.timeoutMs, stored.onFailure, stored.enabled],
      ['before_sign_in', sink.url, 1000, 'deny', true],
    )

    // The secret, once, to copy; a reload shows the hook without it.
    const shown = page.getByRole('status').filter({ hasText: 'Copy the signing secret now' })
    const secret = (await shown.getByTestId('hook-secret').textContent()) ?? ''
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    assert.equal(await copied(page), secret)
    await page.getByText('No calls yet.').waitFor()
    await visit(page, 'console-hook-created')
    await page.reload()
    await page.getByRole('heading', { name: 'Before sign-in before_sign_in', level: 2 }).waitFor()
    assert.equal(await page.getByTestId('hook-secret').count(), 0)
    assert.ok(!(await page.content()).includes(secret))

    // A test call the receiver denies: its message shown, the call signed and marked test.
    const outcome = page.getByRole('status', { name: 'Test call outcome' })
    const calls = page.getByRole('table', { name: 'Last calls' })
    await page.getByRole('button', { name: 'Send a test call' }).click()
    await outcome.getByText('Denied').waitFor()
    await outcome.getByText('Closed for maintenance.').waitFor()
    await outcome.getByText('HTTP 200').waitFor()
    assert.equal(sink.received.length, 1)
    const sent = verify(secret, sink.received[0])
    assert.equal(sent.test, true)
    assert.equal(sent.event, 'before_sign_in')
    await calls.getByRole('row').filter({ hasText: 'Test' }).getByText('Denied').waitFor()

    // A real sign-in, refused by the hook, is listed beside it once the list is refreshed.
    const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
      email: member.email,
      password: member.password,
    })
    assert.equal(login.status, 403)
    await page.getByRole('button', { name: 'Refresh' }).click()
    await calls.getByRole('row').filter({ hasText: 'Real' }).getByText('Denied').waitFor()

    // A receiver that hangs: a timeout, and what a real sign-in would meet (deny).
    mode = 'hang'
    await page.getByRole('button', { name: 'Send a test call' }).click()
    await outcome.getByText('Timed out').waitFor()
    await outcome.getByText('no answer within 1000 ms').waitFor()
    await outcome.getByText('Refused (on failure: deny)').waitFor()
    // A 500: a failure with its status, not the receiver's words.
    mode = 'fail'
    await page.getByRole('button', { name: 'Send a test call' }).click()
    await outcome.getByText('Failed').waitFor()
    assert.equal(await outcome.getByText('HTTP 500', { exact: true }).count(), 2, 'status, error')
    assert.equal(await page.getByText('boom').count(), 0)
    await calls.getByRole('cell', { name: 'HTTP 500' }).waitFor()
    assert.equal(await calls.getByRole('row').count(), 5, 'a header and four calls')
    await visit(page, 'console-hook')

    // Disabled: sign-ins stop calling it, a test call still does.
    await page.getByRole('button', { name: 'Disable', exact: true }).click()
    await page.getByRole('button', { name: 'Enable', exact: true }).waitFor()
    await page.getByText('The hook is disabled').waitFor()
    assert.equal((await getJson(tenant, `/hooks/${stored.id}`)).body.hook.enabled, false)
    await page.getByRole('button', { name: 'Enable', exact: true }).click()
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor()

    // Let sign-ins through when it fails, saved from the settings (only what changed).
    await page.getByLabel('Let through (allow)').check()
    await page.getByRole('button', { name: 'Save hook' }).click()
    await page.getByText('Saved.').waitFor()
    const saved = (await getJson(tenant, `/hooks/${stored.id}`)).body.hook
    assert.deepEqual([saved.onFailure, saved.timeoutMs, saved.url], ['allow', 1000, sink.url])

    // The list offers only the events without a hook; custom_access_token's default is allow.
    await page.getByRole('link', { name: 'All hooks' }).click()
    await page.getByRole('link', { name: 'Before sign-in' }).waitFor()
    const events = await page
      .getByLabel('Event', { exact: true })
      .locator('option')
      .allTextContents()
    assert.deepEqual(events, [
      'Before sign-up (before_sign_up)',
      'Access token claims (custom_access_token)',
    ])
    await page.getByLabel('Event', { exact: true }).selectOption('custom_access_token')
    assert.ok(await page.getByLabel('Token issued without claims (allow)').isChecked())
    await page.getByLabel('Endpoint URL').fill(sink.url)
    await page.getByRole('button', { name: 'Create hook' }).click()
    await page.getByRole('heading', { name: 'Access token claims', level: 2 }).waitFor()
    mode = 'claims'
    await page.getByRole('button', { name: 'Send a test call' }).click()
    await outcome.getByText('Allowed').waitFor()
    await outcome.getByText('"plan": "pro"').waitFor()
    await outcome.getByText('Reserved, dropped: sub').waitFor()

    await page.getByRole('link', { name: 'All hooks' }).click()
    await page.getByRole('link', { name: 'Access token claims' }).waitFor()
    await page.getByRole('cell', { name: 'Let through (allow)' }).waitFor()
    await visit(page, 'console-hooks')

    // Deletion, asked first: the list loads again without it.
    await page.getByRole('link', { name: 'Before sign-in' }).click()
    await page.getByRole('button', { name: 'Delete hook' }).click()
    await page.getByRole('button', { name: 'Yes' }).click()
    await page.getByRole('link', { name: 'Before sign-in' }).waitFor({ state: 'detached' })
    await page.getByRole('link', { name: 'Access token claims' }).waitFor()
    assert.equal((await getJson(tenant, `/hooks/${stored.id}`)).status, 404)
    assert.deepEqual(
      (await getJson(tenant, '/hooks')).body.items.map((h: { event: string }) => h.event),
      ['custom_access_token'],
    )
  } finally {
    await context.close()
  }
})
