// Passkeys on the hosted pages, in Chromium with a virtual authenticator: added from the
// account page, listed, used to sign in from the sign-in page, removed. WebAuthn needs a
// secure context and a domain RP ID, so the pages are reached at http://localhost:<port>
// (PUBLIC_URL), a pass-through proxy in front of the test server.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { createTenant, STRONG_PASSWORD, signup, startTestServer } from '../helpers.ts'

const CHROMIUM = '/usr/bin/chromium'

const body = async (req: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined
}

test('a passkey is added on the account page, signs in from the sign-in page, and is removed', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: apt-get install -y chromium`,
}, async (t) => {
  const { chromium } = await import('playwright-core')
  let target = ''
  const origin = createServer(async (req, res) => {
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'host' && name !== 'connection')
        headers.set(name, value)
    }
    const answer = await fetch(target + (req.url ?? '/'), {
      method: req.method,
      headers,
      body: await body(req),
      redirect: 'manual',
    })
    const out: Record<string, string | string[]> = {}
    answer.headers.forEach((value, name) => {
      if (name !== 'set-cookie' && name !== 'content-length' && name !== 'content-encoding')
        out[name] = value
    })
    const cookies = answer.headers.getSetCookie()
    if (cookies.length > 0) out['set-cookie'] = cookies
    res.writeHead(answer.status, out)
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  origin.listen(0, '127.0.0.1')
  t.after(() => origin.close())
  await new Promise((resolve) => origin.once('listening', resolve))
  const publicUrl = `http://localhost:${(origin.address() as AddressInfo).port}`
  const server = await startTestServer(t, { publicUrl })
  target = server.url
  const tenant = await createTenant(server, { name: 'Hooli' })
  const user = await signup(server, tenant.slug)

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  t.after(() => browser.close())
  const context = await browser.newContext()
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })

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
