// Breached passwords (CONTRACT §21) over real HTTP: the shipped list and a Pwned Passwords
// range API (a real HTTP server of this file's, answering by prefix as the real one does)
// refuse a chosen password under breachedPasswordPolicy block (400 validation, reason
// password_breached; password_too_weak keeps its place), only 5 hex characters leave the
// service, a slow or failing API never blocks a sign-up, a sign-in with a breached password
// succeeds and marks the user until the password changes, and the policy is the tenant's.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type TestContext, test } from 'node:test'
import { tenantSnapshot } from '../../test/db.ts'
import { expectError } from '../../test/envelope.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../test/helpers.ts'

const SHIPPED = 'password12345'
const PWNED = 'velvet-harbor-quartz-19'

/**
 * A range API that knows `pwned`, answering padded pages; `silent`: it never answers (the
 * connection is held until the test ends).
 */
async function rangeApi(t: TestContext, pwned: string[], silent = false) {
  const requests: { url: string; padding: string | undefined }[] = []
  const hashes = pwned.map((p) => createHash('sha1').update(p).digest('hex').toUpperCase())
  const server = createServer((req, res) => {
    requests.push({ url: req.url ?? '', padding: req.headers['add-padding'] as string })
    const prefix = (req.url ?? '').split('/').pop() ?? ''
    const lines = hashes.filter((h) => h.startsWith(prefix)).map((h) => `${h.slice(5)}:42`)
    lines.push('0000000000000000000000000000000000A:0')
    if (!silent) res.end(lines.join('\r\n'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests }
}

function signup(
  server: TestServer,
  tenant: TenantFixture,
  password: string,
  email = uniqueEmail(),
) {
  return server.request('POST', `/v1/${tenant.slug}/auth/signup`, { email, password })
}

test('the shipped list: a breached password is refused at sign-up (nothing created); a weak one stays password_too_weak; policy off lets it through', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  assert.equal(
    (
      await server.request('GET', `/v1/${tenant.slug}/tenant`, undefined, {
        token: tenant.admin.accessToken,
      })
    ).body.breachedPasswordPolicy,
    'block',
    'block by default',
  )
  const before = await tenantSnapshot(server, tenant.tenantId)
  const refused = await signup(server, tenant, SHIPPED)
  expectError(refused, 400, 'password_breached')
  assert.equal(refused.body.code, 'BAD_REQUEST')
  expectError(await signup(server, tenant, 'qwerty123456'), 400, 'password_too_weak')
  assert.deepEqual(await tenantSnapshot(server, tenant.tenantId), before, 'nothing changed')
  const off = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { breachedPasswordPolicy: 'off' },
    { token: tenant.admin.accessToken },
  )
  assert.equal(off.status, 200, JSON.stringify(off.body))
  assert.equal(off.body.breachedPasswordPolicy, 'off')
  assert.equal((await signup(server, tenant, SHIPPED)).status, 200)
  const bad = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { breachedPasswordPolicy: 'warn' },
    { token: tenant.admin.accessToken },
  )
  expectError(bad, 400, 'validation')
})

test('the range API: only the first 5 hex of the SHA-1 leave, with Add-Padding; a hit is refused, a miss accepted', async (t) => {
  const api = await rangeApi(t, [PWNED])
  const server = await startTestServer(t, { pwnedPasswordsUrl: api.url })
  const tenant = await createTenant(server)
  expectError(await signup(server, tenant, PWNED), 400, 'password_breached')
  const hash = createHash('sha1').update(PWNED).digest('hex').toUpperCase()
  const last = api.requests.at(-1)
  assert.equal(last?.url, `/range/${hash.slice(0, 5)}`)
  assert.equal(last?.padding, 'true')
  assert.equal(JSON.stringify(api.requests).includes(hash.slice(5)), false, 'never the suffix')
  assert.equal((await signup(server, tenant, STRONG_PASSWORD)).status, 200, 'a miss is fine')
})

test('a range API slower than 1 s is skipped: the sign-up goes through', async (t) => {
  // The API never answers: a sign-up that waited for it would never end, so its 200 (the
  // password the API would have refused) is the proof; no wall-clock bound to race.
  const api = await rangeApi(t, [PWNED], true)
  const server = await startTestServer(t, { pwnedPasswordsUrl: api.url })
  const tenant = await createTenant(server)
  const res = await signup(server, tenant, PWNED)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(api.requests.length, 1)
})

test('a sign-in with a breached password succeeds and marks the user; a change of password clears it', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const path = `/v1/${tenant.slug}/tenant`
  const admin = { token: tenant.admin.accessToken }
  await server.request('PATCH', path, { breachedPasswordPolicy: 'off' }, admin)
  const email = uniqueEmail()
  const made = await signup(server, tenant, SHIPPED, email)
  const me = (token: string) => server.request('GET', `/v1/${tenant.slug}/me`, undefined, { token })
  assert.equal((await me(made.body.accessToken)).body.passwordBreached, false)
  await server.request('PATCH', path, { breachedPasswordPolicy: 'block' }, admin)
  const login = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email,
    password: SHIPPED,
  })
  assert.equal(login.status, 200, JSON.stringify(login.body))
  const token = { token: login.body.accessToken }
  assert.equal(
    (await server.request('GET', `/v1/${tenant.slug}/me`, undefined, token)).body.passwordBreached,
    true,
  )
  expectError(
    await server.request(
      'PATCH',
      `/v1/${tenant.slug}/me/password`,
      { currentPassword: SHIPPED, newPassword: 'password123456' },
      token,
    ),
    400,
    'password_breached',
  )
  const changed = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/me/password`,
    { currentPassword: SHIPPED, newPassword: STRONG_PASSWORD },
    token,
  )
  assert.equal(changed.status, 200, JSON.stringify(changed.body))
  const again = await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
    email,
    password: STRONG_PASSWORD,
  })
  assert.equal((await me(again.body.accessToken)).body.passwordBreached, false)
})
