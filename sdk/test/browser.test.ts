// Cross-tab refresh in headless Chromium (issue 11 §2): two pages of one origin share
// localStorage; both find the access token expired at once, and exactly one refresh
// reaches the service (Web Locks, then a re-read of the store), both pages ending with
// the same new tokens and the session alive (no refresh-token reuse was detected).
// Needs /usr/bin/chromium (Debian's `chromium` package); skipped without it.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, extname, join, normalize } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  tempDir,
  uniqueEmail,
} from '../../test/helpers.ts'
import { createClient, createSessionClient } from '../src/index.ts'

const CHROMIUM = '/usr/bin/chromium'
const SDK = join(import.meta.dirname, '..')
const TSC = join(SDK, '..', 'node_modules', 'typescript', 'bin', 'tsc')
const JOSE = dirname(fileURLToPath(import.meta.resolve('jose')))

// The page loads the built SDK (and jose through an import map), then waits for run(). run()
// waits at /start until both tabs are there, so they meet the expired token together however
// long the machine takes to reach either (a start time fixed in advance can pass first).
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SDK cross-tab refresh</title>
<script type="importmap">{"imports":{"jose":"/jose/index.js"}}</script>
<script type="module">
import { createSessionClient, localStorageStore } from '/sdk/index.js'
window.run = async ({ tenant, calls }) => {
  const session = createSessionClient({ baseUrl: location.origin, tenant, store: localStorageStore() })
  await fetch('/start')
  const users = await Promise.all(Array.from({ length: calls }, () => session.api.getMe()))
  return { ids: users.map((u) => u.id), session: await session.getSession(), locks: !!navigator.locks }
}
window.ready = true
</script></head><body><main><h1>SDK cross-tab refresh</h1></main></body></html>`

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html' }

const body = async (req: IncomingMessage) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return chunks.length > 0 ? Buffer.concat(chunks) : undefined
}

test('two tabs sharing localStorage refresh once: one refresh request, the same new tokens in both', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: apt-get install -y chromium`,
}, async (t) => {
  const { chromium } = await import('playwright-core')
  const server = await startTestServer(t)
  const tenant = await createTenant(server)

  // The SDK as a browser gets it: built by tsc.
  const built = tempDir('sdk-browser-')
  const build = spawnSync(
    process.execPath,
    [TSC, '-p', join(SDK, 'tsconfig.build.json'), '--outDir', built],
    {
      encoding: 'utf8',
    },
  )
  assert.equal(build.status, 0, build.stdout + build.stderr)

  // A session whose access token the service already sees as expired (it checks exp
  // with the real time; the sign-in happened with its clock 16 minutes behind).
  server.clock.advance(-16 * 60)
  const seed = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
  const seeded = await seed.signup({ email: uniqueEmail(), password: STRONG_PASSWORD })
  assert.ok('user' in seeded)
  const { user } = seeded
  server.clock.advance(16 * 60)
  const initial = await seed.getSession()
  assert.ok(initial)

  // One origin: the page, the built SDK, jose, and the service behind a proxy.
  const seen = { refresh: 0, me: 0, me401: 0 }
  const waiting: ServerResponse[] = []
  const origin = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const file = (root: string, rest: string) => {
      const path = normalize(join(root, rest))
      if (!path.startsWith(root) || !existsSync(path)) return res.writeHead(404).end()
      res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' })
      res.end(readFileSync(path))
    }
    if (url.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    if (url.pathname === '/start') {
      // Answered once both tabs wait here.
      waiting.push(res)
      if (waiting.length === 2) for (const r of waiting.splice(0)) r.writeHead(204).end()
      return
    }
    if (url.pathname.startsWith('/sdk/')) return file(built, url.pathname.slice(5))
    if (url.pathname.startsWith('/jose/')) return file(JOSE, url.pathname.slice(6))
    if (!url.pathname.startsWith('/v1/')) return res.writeHead(404).end()
    if (url.pathname.endsWith('/auth/refresh')) seen.refresh++
    const headers: Record<string, string> = {}
    for (const name of ['authorization', 'content-type', 'accept']) {
      const value = req.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    const answer = await fetch(server.url + url.pathname + url.search, {
      method: req.method,
      headers,
      body: await body(req),
    })
    if (url.pathname.endsWith('/me')) {
      seen.me++
      if (answer.status === 401) seen.me401++
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'text/plain',
    })
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  origin.listen(0, '127.0.0.1')
  t.after(() => origin.close())
  await new Promise((resolve) => origin.once('listening', resolve))
  const base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  t.after(() => browser.close())
  const context = await browser.newContext()
  const [tab1, tab2] = [await context.newPage(), await context.newPage()]
  for (const tab of [tab1, tab2]) {
    await tab.goto(base)
    await tab.waitForFunction('window.ready === true')
  }
  await tab1.evaluate(([key, value]) => localStorage.setItem(key, value), [
    `tenant-auth:session:${tenant.slug}`,
    JSON.stringify(initial),
  ] as const)

  const args = { tenant: tenant.slug, calls: 5 }
  const script = `window.run(${JSON.stringify(args)})`
  type Result = {
    ids: string[]
    session: { accessToken: string; refreshToken: string }
    locks: boolean
  }
  const [r1, r2] = (await Promise.all([tab1.evaluate(script), tab2.evaluate(script)])) as Result[]
  console.log(
    `browser tabs: 2 tabs × ${args.calls} calls → ${seen.me} /me requests (${seen.me401} answered 401 token_expired), ` +
      `${seen.refresh} refresh request(s)`,
  )
  assert.ok(r1.locks && r2.locks, 'Chromium has the Web Locks API')
  assert.deepEqual([...r1.ids, ...r2.ids], Array(2 * args.calls).fill(user.id))
  assert.equal(seen.refresh, 1)
  assert.ok(seen.me401 >= 2, 'both tabs met the expired token')
  assert.equal(r1.session.refreshToken, r2.session.refreshToken)
  assert.equal(r1.session.accessToken, r2.session.accessToken)
  assert.notEqual(r1.session.refreshToken, initial.refreshToken)
  // The session is alive: the tabs' token refreshes once more.
  const next = await createClient({ baseUrl: server.url, tenant: tenant.slug }).refreshSession({
    body: { refreshToken: r1.session.refreshToken },
  })
  assert.ok(next.accessToken)
})
