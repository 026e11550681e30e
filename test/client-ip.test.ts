// TRUST_PROXY=true trusts the one proxy in front: the client address is the entry that
// proxy appended to X-Forwarded-For, never one the client wrote itself (rate limits and
// the audit log key on it).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { and, eq } from '../src/db/orm.ts'
import { auditEvents } from '../src/db/schema.ts'
import { createTenant, startTestServer, type TestServer, uniqueEmail } from './helpers.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t, { trustProxy: true })
})

test('rule: a client cannot choose its IP by prepending to X-Forwarded-For', async () => {
  const t = await createTenant(server)
  const email = uniqueEmail()
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/auth/login`,
    { email, password: 'wrong-password' },
    { headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' } },
  )
  assert.equal(res.status, 401)
  const rows = await server.deps.db
    .select({ ip: auditEvents.ip })
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'UserLoginFailed')))
  assert.deepEqual(
    rows.map((r) => r.ip),
    ['203.0.113.9'],
  )
})

test('rule: an X-Forwarded-For entry that is not an IP address is not used (CONTRACT §8)', async () => {
  const t = await createTenant(server)
  const forwarded = ['not-an-ip', '<script>', '1.2.3.4.5', '999.1.1.1', 'fe80::1::2', '']
  for (const value of forwarded) {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/auth/login`,
      { email: uniqueEmail(), password: 'wrong-password' },
      { headers: { 'x-forwarded-for': value } },
    )
    assert.equal(res.status, 401)
  }
  // A real IPv6 address is used as given.
  await server.request(
    'POST',
    `/v1/${t.slug}/auth/login`,
    { email: uniqueEmail(), password: 'wrong-password' },
    { headers: { 'x-forwarded-for': '2001:db8::7' } },
  )
  const rows = await server.deps.db
    .select({ ip: auditEvents.ip })
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'UserLoginFailed')))
  const ips = rows.map((r) => r.ip).sort()
  // The socket's address stands in for each bad entry.
  assert.deepEqual(ips, [
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '127.0.0.1',
    '2001:db8::7',
  ])
})
