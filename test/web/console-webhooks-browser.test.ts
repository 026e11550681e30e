// The console's Webhooks page (CONTRACT §13) in a real browser (Debian's Chromium through
// playwright-core) against the real app, as an admin uses it, with a receiver on 127.0.0.1
// (WEBHOOK_ALLOW_PRIVATE=true) and a WebhookWorker of the test's own (the app's is off in
// tests): a bad URL and an empty choice of events are shown by their fields and change
// nothing; the secret is shown once and signs what the receiver gets; a test event that the
// endpoint refuses shows its failure in the delivery log and the endpoint's failing state,
// and "Retry" sends it again with the same webhook-id until it succeeds; disable, rotation
// (both secrets sign for a while), a change of events, deletion. Every view is checked with
// axe-core, must not scroll sideways at phone width, and is photographed at desktop and
// phone widths into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { WebhookWorker } from '../../src/modules/webhooks/worker.ts'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, descriptionOf, visit } from '../fixtures/console.ts'
import { createTenant, startTestServer, type TenantFixture, type TestServer } from '../helpers.ts'

let server: TestServer
let browser: Browser

before(async (ctx) => {
  if (skip) return
  // No automatic retry within the test: the clock stands still, and an hour never passes.
  server = await startTestServer(ctx, { webhookAllowPrivate: true, webhookRetrySchedule: [3600] })
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
})

/** Clicks a copy button and answers what it put on the clipboard. */
async function copied(page: Page, button: string): Promise<string> {
  await page.getByRole('button', { name: button, exact: true }).click()
  await page.getByRole('button', { name: 'Copied' }).first().waitFor()
  return page.evaluate(() => navigator.clipboard.readText())
}

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

interface Received {
  headers: IncomingHttpHeaders
  body: string
}

/** A receiver on 127.0.0.1 answering `statuses` in turn, then 200. */
async function receiver(statuses: number[]) {
  const received: Received[] = []
  const sink = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.statusCode = statuses[received.length - 1] ?? 200
      res.end()
    })
  })
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve))
  const { port } = sink.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks/auth`,
    received,
    close: () => new Promise<void>((resolve) => sink.close(() => resolve())),
  }
}

/** Whether `secret` verifies what the receiver got (Standard Webhooks, any signature). */
function signedWith(secret: string, r: Received): boolean {
  try {
    new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
    return true
  } catch {
    return false
  }
}

test('console webhooks: bad fields shown where the API names them and nothing changed; the secret shown once signs the deliveries; a refused test event is logged, marks the endpoint failing, and Retry sends it again with the same webhook-id; disable, rotate, change events, delete; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const sink = await receiver([500])
  const worker = new WebhookWorker(server.deps)
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click()
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    await page.getByText('No webhooks yet').waitFor()
    await visit(page, 'console-webhooks-empty')

    // A URL that is no URL: the API's message at the URL field; nothing changed.
    const url = page.getByLabel('Endpoint URL')
    await url.fill('hooks.example.com/auth')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create webhook' }).click()
      await page.getByText('not an absolute URL').waitFor()
    })
    assert.equal(await url.getAttribute('aria-invalid'), 'true')
    assert.ok((await descriptionOf(url)).includes('not an absolute URL'))

    // "Only the events chosen" with none chosen: the message at the events; nothing changed.
    await url.fill(sink.url)
    await page.getByLabel('Only the events chosen below').check()
    const events = page.getByRole('group', { name: 'Events', exact: true })
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create webhook' }).click()
      await events.locator('.field-error').waitFor()
    })
    assert.equal(await url.getAttribute('aria-invalid'), null, 'the URL is right now')
    const eventsMessage = (await events.locator('.field-error').textContent()) ?? ''
    assert.match(eventsMessage, /fewer than 1/)
    assert.ok((await descriptionOf(events)).includes(eventsMessage))
    assert.equal((await getJson(tenant, '/webhooks')).body.items.length, 0)
    await visit(page, 'console-webhooks-invalid')

    // Created with two events (ticked out of the list's order) and a description.
    await page.getByLabel('WebhookSecretRotated', { exact: true }).check()
    await page.getByLabel('UserSignup', { exact: true }).check()
    await page.getByLabel('Description (optional)').fill('Billing sync')
    await page.getByRole('button', { name: 'Create webhook' }).click()
    await page.getByRole('heading', { name: sink.url, level: 2 }).waitFor()
    const listed = await getJson(tenant, '/webhooks')
    assert.equal(listed.body.items.length, 1)
    const hook = listed.body.items[0]
    assert.deepEqual(hook.events, ['UserSignup', 'WebhookSecretRotated'])
    assert.equal(hook.description, 'Billing sync')
    assert.equal(hook.enabled, true)

    // The secret, once, to copy.
    const status = page.getByRole('status').filter({ hasText: 'Copy the signing secret now' })
    const secret = (await status.getByTestId('webhook-secret').textContent()) ?? ''
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    assert.equal(await copied(page, 'Copy secret'), secret)
    await page.getByText('No deliveries yet.').waitFor()
    await visit(page, 'console-webhook-created')

    // A reload shows the endpoint without its secret.
    await page.reload()
    await page.getByRole('heading', { name: sink.url, level: 2 }).waitFor()
    assert.equal(await page.getByTestId('webhook-secret').count(), 0)
    assert.ok(!(await page.content()).includes(secret))

    // A test event, refused by the receiver (500): logged with its answer, the endpoint failing.
    await page.getByRole('button', { name: 'Send test event' }).click()
    const testRow = page.getByRole('row').filter({ hasText: 'WebhookTest' })
    await testRow.getByText('Pending').waitFor()
    await worker.runOnce()
    await testRow.getByRole('cell', { name: 'HTTP 500', exact: true }).waitFor()
    assert.equal(await testRow.getByRole('cell', { name: '500', exact: true }).count(), 1)
    assert.equal(await testRow.getByRole('cell', { name: '1', exact: true }).count(), 1)
    await page.getByText(/failing since/).waitFor()
    assert.equal(sink.received.length, 1)
    const first = sink.received[0] as Received
    assert.ok(signedWith(secret, first), 'signed with the secret the page showed')
    assert.equal(JSON.parse(first.body).type, 'WebhookTest')
    await visit(page, 'console-webhook-failing')

    // Retry: sent again now, with the same webhook-id; the receiver takes it.
    await testRow.getByRole('button', { name: /^Retry/ }).click()
    await page.getByText('The delivery is queued to be sent again now.').waitFor()
    await worker.runOnce()
    await testRow.getByText('Succeeded').waitFor()
    assert.equal(await testRow.getByRole('cell', { name: '2', exact: true }).count(), 1)
    assert.equal(await testRow.getByRole('cell', { name: '200', exact: true }).count(), 1)
    assert.equal(sink.received.length, 2)
    assert.equal(sink.received[1]?.headers['webhook-id'], first.headers['webhook-id'])
    await page.getByText(/failing since/).waitFor({ state: 'detached' })
    const [delivery] = (await getJson(tenant, `/webhooks/${hook.id}/deliveries`)).body.items
    assert.equal(delivery.status, 'Succeeded')
    assert.equal(delivery.lastError, null)
    await visit(page, 'console-webhook-deliveries')

    // Disable and enable again.
    await page.getByRole('button', { name: 'Disable', exact: true }).click()
    await page.getByRole('button', { name: 'Enable', exact: true }).waitFor()
    assert.equal((await getJson(tenant, `/webhooks/${hook.id}`)).body.webhook.enabled, false)
    await page.getByText('Disabled', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'Enable', exact: true }).click()
    await page.getByRole('button', { name: 'Disable', exact: true }).waitFor()
    assert.equal((await getJson(tenant, `/webhooks/${hook.id}`)).body.webhook.enabled, true)

    // Rotation: a new secret, shown once; its own WebhookSecretRotated event is signed with
    // the new secret and, for the overlap, the old one.
    await page.getByRole('button', { name: 'Rotate secret' }).click()
    await page.getByRole('button', { name: 'Yes' }).click()
    const rotated = (await page.getByTestId('webhook-secret').textContent()) ?? ''
    assert.match(rotated, /^whsec_/)
    assert.notEqual(rotated, secret)
    const rotatedRow = page.getByRole('row').filter({ hasText: 'WebhookSecretRotated' })
    await rotatedRow.waitFor()
    await worker.runOnce()
    await rotatedRow.getByText('Succeeded').waitFor()
    const third = sink.received[2] as Received
    assert.equal(JSON.parse(third.body).type, 'WebhookSecretRotated')
    assert.ok(signedWith(rotated, third) && signedWith(secret, third), 'both secrets sign')
    await page.getByRole('button', { name: 'Done' }).click()
    assert.equal(await page.getByTestId('webhook-secret').count(), 0)

    // Every event, saved from the settings.
    await page.getByLabel('All events, and those added later').check()
    await page.getByRole('button', { name: 'Save webhook' }).click()
    await page.getByText('Saved.').waitFor()
    assert.deepEqual((await getJson(tenant, `/webhooks/${hook.id}`)).body.webhook.events, ['*'])

    // The list, then deletion.
    await page.getByRole('link', { name: 'All webhooks' }).click()
    await page.getByRole('link', { name: sink.url }).waitFor()
    await page.getByRole('cell', { name: 'All events' }).waitFor()
    await page.getByRole('cell', { name: 'Enabled' }).waitFor()
    await visit(page, 'console-webhooks')
    await page.getByRole('link', { name: sink.url }).click()
    await page.getByRole('button', { name: 'Delete webhook' }).click()
    await page.getByRole('button', { name: 'Yes' }).click()
    await page.getByText('No webhooks yet').waitFor()
    assert.equal((await getJson(tenant, `/webhooks/${hook.id}`)).status, 404)
  } finally {
    await context.close()
    await worker.stop()
    await sink.close()
  }
})
