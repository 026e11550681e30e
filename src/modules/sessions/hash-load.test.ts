// Password hashing under load (issue 10): at most HASH_CONCURRENCY hashes run and at most
// HASH_QUEUE_LIMIT more wait; beyond that a sign-in is shed at once with 503 `unavailable`
// and Retry-After, and the shed try costs the account nothing (no failure counted, nothing
// audited, nothing written).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { hashLoad } from '../../lib/passwords.ts'

describe('one hash at a time, none waiting', () => {
  let server: TestServer
  let t: TenantFixture
  before(async () => {
    server = await startServer({
      hashConcurrency: 1,
      hashQueueLimit: 0,
      // Ten failures hold the account: the shed tries must not count among them.
      limits: { ...GENEROUS_LIMITS, loginFailures: { points: 10, seconds: 900 } },
    })
    t = await createTenant(server)
  })
  after(() => server.close())

  test('rule: a burst of logins beyond the bound is shed with 503 and Retry-After, and costs nothing', async () => {
    const u = await signup(server, t.slug)
    const ip = randomIp()
    const mark = await auditMark(server, t.tenantId)
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        server.request(
          'POST',
          `/v1/${t.slug}/auth/login`,
          { email: u.email, password: 'not-the-password-12' },
          { ip },
        ),
      ),
    )
    const shed = answers.filter((r) => r.status === 503)
    const refused = answers.filter((r) => r.status === 401)
    assert.ok(shed.length >= 1, `statuses: ${answers.map((r) => r.status)}`)
    assert.equal(shed.length + refused.length, answers.length)
    for (const res of shed) {
      expectError(res, 503, 'unavailable')
      assert.equal(res.headers.get('retry-after'), '1')
    }
    // Only the wrong passwords actually checked were failures.
    const failures = (await auditSince(server, t.tenantId, mark)).filter(
      (e) => e.action === 'UserLoginFailed',
    )
    assert.equal(failures.length, refused.length)
    assert.equal(hashLoad().queued, 0)
  })

  test('rule: shed sign-ins do not use up the failure budget', async () => {
    const u = await signup(server, t.slug)
    const ip = randomIp()
    const login = (password: string) =>
      server.request('POST', `/v1/${t.slug}/auth/login`, { email: u.email, password }, { ip })
    // Eight wrong passwords at once: each reserves a try, one is checked, the rest are shed.
    const burst = await Promise.all(Array.from({ length: 8 }, () => login('wrong-password-77')))
    const checked = burst.filter((r) => r.status === 401).length
    assert.ok(checked < 8, `statuses: ${burst.map((r) => r.status)}`)
    // Only the checked ones count: the budget of 10 has 10 - checked tries left.
    for (let i = checked; i < 10; i++)
      expectError(await login('wrong-password-77'), 401, 'invalid_credentials')
    expectError(await login(u.password), 429, 'rate_limited')
  })

  test('rule: a signup shed for load creates nothing', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        server.request('POST', `/v1/${t.slug}/auth/signup`, {
          email: `burst-${i}-${Date.now()}@example.com`,
          password: 'plum-orbit-canvas-77',
        }),
      ),
    )
    const created = answers.filter((r) => r.status === 200).length
    const shed = answers.filter((r) => r.status === 503)
    assert.ok(shed.length >= 1, `statuses: ${answers.map((r) => r.status)}`)
    for (const res of shed) expectError(res, 503, 'unavailable')
    const after = await tenantSnapshot(server, t.tenantId)
    assert.equal(after.users.length, before.users.length + created)
  })
})
