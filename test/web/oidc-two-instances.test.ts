// CONTRACT §11, State: the provider keeps every step in the database (keys led by
// tenant_id), so any instance serves any step of a flow. Here a real browser reaches two
// instances of the service on one database through a balancer that sends each request to
// the other instance than the one before: the authorization request, the hosted sign-in,
// the consent and the return each land on alternating instances; then openid-client
// exchanges the code on one, refreshes on the other, and a reused refresh token is refused
// on the first and revokes the grant for both.
import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import * as client from 'openid-client'
import type { Browser } from 'playwright-core'
import { launchChromium, chromiumSkip as skip } from '../fixtures/browser.ts'
import { createApplication, issuerOf, oidcClient, signInOnSignInPage } from '../fixtures/oidc.ts'
import {
  createTenant,
  signup,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'

let first: TestServer
let second: Pick<TestServer, 'url' | 'deps' | 'request'>
let browser: Browser
let t: TenantFixture
let callback: Server
let callbackUrl: string
const received: URL[] = []
/** What `before` started besides the first server (which closes itself), closed in `after`. */
const closers: (() => Promise<void>)[] = []
/** Which instance served each request through the balancer, in order. */
const served: { instance: 'first' | 'second'; path: string }[] = []

const bodyOf = async (req: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined
}

/** A balancer in front of both instances, sending each request to the other one in turn. */
async function alternatingBalancer(): Promise<{ port: number; close(): Promise<void> }> {
  let turn = 0
  const balancer = createServer(async (req, res) => {
    const instance = turn++ % 2 === 0 ? 'first' : 'second'
    const target = instance === 'first' ? first.url : second.url
    served.push({ instance, path: (req.url ?? '/').split('?')[0] })
    const headers = new Headers()
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string' && name !== 'connection') headers.set(name, value)
    }
    const answer = await fetch(target + (req.url ?? '/'), {
      method: req.method,
      headers,
      body: await bodyOf(req),
      redirect: 'manual',
    })
    const out: Record<string, string | string[]> = {}
    answer.headers.forEach((value, name) => {
      if (!['set-cookie', 'content-length', 'content-encoding'].includes(name)) out[name] = value
    })
    const cookies = answer.headers.getSetCookie()
    if (cookies.length > 0) out['set-cookie'] = cookies
    res.writeHead(answer.status, out)
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((done) => balancer.listen(0, '127.0.0.1', done))
  return {
    port: (balancer.address() as AddressInfo).port,
    close: () => new Promise((done) => balancer.close(() => done())),
  }
}

before(async (ctx) => {
  if (skip) return
  first = await startTestServer(ctx)
  const other = await startSecondInstance(first)
  closers.push(() => other.close())
  second = other
  t = await createTenant(first)
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? '/', callbackUrl)
    if (url.pathname === '/callback') received.push(url)
    res.writeHead(200, { 'content-type': 'text/plain' }).end('back in the application')
  })
  await new Promise<void>((done) => callback.listen(0, '127.0.0.1', done))
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`
  const balancer = await alternatingBalancer()
  closers.push(() => balancer.close())
  browser = await launchChromium(balancer.port)
})

after(async () => {
  if (skip) return
  await browser?.close()
  await new Promise((done) => callback?.close(done))
  for (const close of closers) await close()
})

test('any instance serves any step: sign-in, consent and return alternate between two instances; the code is exchanged on one, refreshed on the other, and a reused refresh token is refused everywhere', {
  skip,
}, async () => {
  const made = await signup(first, t.slug)
  const created = await createApplication(first, t.slug, t.admin.accessToken, {
    name: 'Gadget Planner',
    type: 'web',
    redirectUris: [callbackUrl],
    firstParty: false,
  })
  const app = {
    clientId: created.application.clientId,
    clientSecret: String(created.clientSecret),
  }
  const onFirst = await oidcClient(first, t.slug, app.clientId, app.clientSecret)
  const onSecond = await oidcClient(second, t.slug, app.clientId, app.clientSecret)
  const verifier = client.randomPKCECodeVerifier()
  const nonce = client.randomNonce()
  const state = client.randomState()
  const url = client
    .buildAuthorizationUrl(onFirst, {
      redirect_uri: callbackUrl,
      scope: 'openid email offline_access',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      prompt: 'consent',
      nonce,
      state,
    })
    .href.replace(first.url, first.deps.config.publicUrl)
  assert.ok(url.startsWith(`${issuerOf(first, t.slug)}/auth?`), url)

  const context = await browser.newContext()
  try {
    const page = await context.newPage()
    await page.goto(url)
    await signInOnSignInPage(page, t.slug, made)
    await page.getByRole('heading', { name: /Gadget Planner wants to use/ }).waitFor()
    await page.getByRole('button', { name: 'Allow' }).click()
    await page.waitForURL((at) => at.href.startsWith(callbackUrl))
  } finally {
    await context.close()
  }
  // The flow's own requests (the hosted pages and the provider's) went to both instances.
  const flow = served.filter((s) => s.path.startsWith('/oidc/') || s.path.startsWith('/t/'))
  assert.ok(
    flow.some((s) => s.instance === 'first') && flow.some((s) => s.instance === 'second'),
    JSON.stringify(flow),
  )

  const returned = received.at(-1)
  assert.ok(returned, 'the browser came back to the application')
  const tokens = await client.authorizationCodeGrant(onFirst, returned, {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  })
  assert.equal(tokens.claims()?.sub, made.user.id)
  const info = await client.fetchUserInfo(onSecond, tokens.access_token, made.user.id)
  assert.equal(info.email, made.email)

  const spent = String(tokens.refresh_token)
  const rotated = await client.refreshTokenGrant(onSecond, spent)
  assert.notEqual(rotated.refresh_token, spent)
  assert.equal(rotated.claims()?.sub, made.user.id)

  // The spent one again, on the other instance: refused, and the grant with it (the SPEC's
  // family rule), so the rotated one stops working on both.
  await assert.rejects(client.refreshTokenGrant(onFirst, spent), { error: 'invalid_grant' })
  await assert.rejects(client.refreshTokenGrant(onSecond, String(rotated.refresh_token)), {
    error: 'invalid_grant',
  })
  await assert.rejects(client.refreshTokenGrant(onFirst, String(rotated.refresh_token)), {
    error: 'invalid_grant',
  })
})
