// The session client's refresh rules (issue 11 §2): a refresh token is single use and
// spending it twice revokes the session (CONTRACT §4), so however many calls find the
// access token expired at once, exactly one refresh reaches the service: within one
// client (single flight), and across clients sharing a store (Web Lock, then re-read).
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { before, test } from 'node:test'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../test/helpers.ts'
import {
  AuthServiceError,
  createSessionClient,
  localStorageStore,
  memoryStore,
  type SessionStore,
} from '../src/index.ts'

let server: TestServer
let tenant: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  tenant = await createTenant(server)
})

/** Requests as the service's HTTP server receives them, by path suffix. */
function countAtService(s: TestServer) {
  const seen = { refresh: 0, me: 0 }
  const listener = (req: IncomingMessage) => {
    if (req.url?.endsWith('/auth/refresh')) seen.refresh++
    if (req.url?.endsWith('/me')) seen.me++
  }
  s.app.server.on('request', listener)
  return { seen, stop: () => s.app.server.off('request', listener) }
}

/**
 * A session whose access token the service already sees as expired while the client,
 * which counts 15 minutes from receiving it, does not: the service verifies `exp` with
 * the real time, so the sign-in happens with the service's clock 16 minutes behind.
 */
async function signedInExpired(store: SessionStore = memoryStore()) {
  server.clock.advance(-16 * 60)
  try {
    return await signedIn(store)
  } finally {
    server.clock.advance(16 * 60)
  }
}

async function signedIn(store: SessionStore = memoryStore()) {
  const session = createSessionClient({ baseUrl: server.url, tenant: tenant.slug, store })
  const email = uniqueEmail()
  await session.signup({ email, password: STRONG_PASSWORD })
  return { session, email, store }
}

test('refresh single flight: 20 concurrent calls that all get 401 token_expired cause exactly 1 refresh', async () => {
  // Every call goes out with the old token and comes back 401 token_expired.
  const { session } = await signedInExpired()
  const before = await session.getSession()
  const counter = countAtService(server)
  try {
    const N = 20
    const results = await Promise.all(Array.from({ length: N }, () => session.api.getMe()))
    assert.equal(results.length, N)
    assert.ok(results.every((me) => me.id === before?.user.id))
    console.log(
      `single flight: ${N} concurrent calls → ${counter.seen.me} /me requests at the service ` +
        `(${N} refused 401 token_expired + ${counter.seen.me - N} retried), ` +
        `${counter.seen.refresh} refresh request(s)`,
    )
    assert.equal(counter.seen.refresh, 1)
    assert.equal(counter.seen.me, 2 * N)
    const after = await session.getSession()
    assert.notEqual(after?.refreshToken, before?.refreshToken)
  } finally {
    counter.stop()
  }
})

test('the access token is refreshed shortly before it expires, without a 401 first', async () => {
  let offset = 0
  const store = memoryStore()
  const session = createSessionClient({
    baseUrl: server.url,
    tenant: tenant.slug,
    store,
    refreshLeewaySeconds: 60,
    now: () => Date.now() + offset,
  })
  await session.signup({ email: uniqueEmail(), password: STRONG_PASSWORD })
  const first = await session.getSession()
  const counter = countAtService(server)
  try {
    offset = 850_000 // 50 s before expiry by the client's clock: inside the leeway
    await Promise.all(Array.from({ length: 5 }, () => session.api.getMe()))
    assert.equal(counter.seen.refresh, 1)
    assert.equal(counter.seen.me, 5, 'no call was refused first')
    assert.notEqual((await session.getSession())?.accessToken, first?.accessToken)
  } finally {
    counter.stop()
  }
})

test('two clients sharing a store (two tabs): one refresh, and both end with the same tokens', async () => {
  // Two clients each have their own single flight; only the Web Lock and the re-read of
  // the store after it keep the second from spending the refresh token again.
  assert.equal(typeof navigator.locks?.request, 'function', 'Node 24 has the Web Locks API')
  const items = new Map<string, string>()
  const storage = {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
    removeItem: (k: string) => void items.delete(k),
  }
  const store = localStorageStore(storage)
  const { session: tab1 } = await signedInExpired(store)
  const tab2 = createSessionClient({ baseUrl: server.url, tenant: tenant.slug, store })
  const before = await tab1.getSession()
  const counter = countAtService(server)
  try {
    await Promise.all([
      ...Array.from({ length: 10 }, () => tab1.api.getMe()),
      ...Array.from({ length: 10 }, () => tab2.api.getMe()),
    ])
    console.log(`two tabs: 20 concurrent calls → ${counter.seen.refresh} refresh request(s)`)
    assert.equal(counter.seen.refresh, 1)
    const [s1, s2] = [await tab1.getSession(), await tab2.getSession()]
    assert.equal(s1?.refreshToken, s2?.refreshToken)
    assert.notEqual(s1?.refreshToken, before?.refreshToken)
    // And the session is still alive: no reuse was detected.
    assert.ok(await tab2.refresh())
  } finally {
    counter.stop()
  }
})

test('a refused refresh ends the session in the store and throws AuthServiceError', async () => {
  const { session, store } = await signedIn()
  const stale = await session.getSession()
  await session.api.logoutAll()
  await assert.rejects(
    session.refresh(),
    (e: unknown) => e instanceof AuthServiceError && e.status === 401,
  )
  assert.equal(await session.getSession(), null)
  assert.equal(await store.get(`tenant-auth:session:${tenant.slug}`), null)
  assert.ok(stale)
})

test('an async store works the same', async () => {
  const items = new Map<string, string>()
  const store: SessionStore = {
    get: async (k) => items.get(k) ?? null,
    set: async (k, v) => {
      items.set(k, v)
    },
    remove: async (k) => {
      items.delete(k)
    },
  }
  const { session, email } = await signedIn(store)
  assert.equal((await session.api.getMe()).email, email)
  assert.ok(await session.getAccessToken())
  const res = await session.fetch(`/v1/${tenant.slug}/me`)
  assert.equal(res.status, 200)
  const request = new Request(`${server.url}/v1/${tenant.slug}/me`, { headers: { 'x-a': 'b' } })
  const viaRequest = await session.fetch(request, { headers: { accept: 'application/json' } })
  assert.equal(viaRequest.status, 200)
  await session.logout()
  assert.equal(items.size, 0)
  assert.equal(await session.getAccessToken(), null)
})
