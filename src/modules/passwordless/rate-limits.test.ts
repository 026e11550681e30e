// SPEC, Limits: code requests 3 per 15 minutes per address and 10 per minute per IP, as
// independent buckets; CONTRACT §6: verification 60 per minute per IP. The limits answer
// the same for addresses with and without an account.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
  randomIp,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { DEFAULT_LIMITS } from '../../lib/limits.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, {
    smtpUrl: sink.url,
    limits: {
      ...GENEROUS_LIMITS,
      codeRequestsPerEmail: DEFAULT_LIMITS.codeRequestsPerEmail,
      codeRequestsPerIp: DEFAULT_LIMITS.codeRequestsPerIp,
      tokenEndpoints: { points: 3, seconds: 60 },
    },
  })
})
after(async () => {
  await sink.stop()
})

const ask = (slug: string, email: string, ip = randomIp()) =>
  server.request('POST', `/v1/${slug}/auth/request-login-code`, { email }, { ip })

test('the defaults are the spec values: 3 per 15 minutes per address, 10 per minute per IP', () => {
  assert.deepEqual(DEFAULT_LIMITS.codeRequestsPerEmail, { points: 3, seconds: 15 * 60 })
  assert.deepEqual(DEFAULT_LIMITS.codeRequestsPerIp, { points: 10, seconds: 60 })
})

test('a 4th code request for one address within 15 minutes is 429 from any IP, and sends nothing', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  for (let i = 0; i < 3; i++) assert.equal((await ask(t.slug, u.email)).status, 200)
  await sink.waitFor(u.email, 3)
  const beforeRows = await tenantSnapshot(server, t.tenantId)
  const refused = await ask(t.slug, u.email)
  expectError(refused, 429, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) > 60, 'the address window is 15 minutes')
  await server.deps.mailer.drain()
  assert.equal(sink.to(u.email).length, 3)
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), beforeRows)
  // Another address is not affected.
  const other = await member(server, t.slug)
  assert.equal((await ask(t.slug, other.email)).status, 200)
})

test('an unknown address meets the same per-address limit as a real one', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const ghost = uniqueEmail('ghost')
  for (let i = 0; i < 3; i++) assert.equal((await ask(t.slug, ghost)).status, 200)
  expectError(await ask(t.slug, ghost), 429, 'rate_limited')
})

test('the per-address bucket counts per tenant: the same address elsewhere is not limited', async () => {
  const t1 = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const t2 = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const email = uniqueEmail('shared')
  for (let i = 0; i < 3; i++) assert.equal((await ask(t1.slug, email)).status, 200)
  expectError(await ask(t1.slug, email), 429, 'rate_limited')
  assert.equal((await ask(t2.slug, email)).status, 200)
})

test('an 11th code request from one IP within a minute is 429, while other IPs go on', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const ip = randomIp()
  const emails = Array.from({ length: 11 }, () => uniqueEmail('ip'))
  for (const email of emails.slice(0, 10)) assert.equal((await ask(t.slug, email, ip)).status, 200)
  const refused = await ask(t.slug, emails[10], ip)
  expectError(refused, 429, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) <= 60)
  // Independent buckets: the address itself still has room, from another IP.
  assert.equal((await ask(t.slug, emails[10])).status, 200)
  assert.equal((await ask(t.slug, emails[0])).status, 200)
})

test('independent buckets: a limited address does not use up its IP, a limited IP does not use up the address', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const ip = randomIp()
  const busy = uniqueEmail('busy')
  for (let i = 0; i < 3; i++) assert.equal((await ask(t.slug, busy, ip)).status, 200)
  expectError(await ask(t.slug, busy, ip), 429, 'rate_limited')
  // The same IP still serves other addresses (its bucket holds 10, 4 spent).
  for (let i = 0; i < 6; i++) assert.equal((await ask(t.slug, uniqueEmail('next'), ip)).status, 200)
  expectError(await ask(t.slug, uniqueEmail('next'), ip), 429, 'rate_limited')
})

test('a burst of parallel requests for one address gets exactly 3 through', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  const answers = await Promise.all(Array.from({ length: 8 }, () => ask(t.slug, u.email)))
  assert.equal(answers.filter((r) => r.status === 200).length, 3)
  for (const r of answers.filter((x) => x.status !== 200)) expectError(r, 429, 'rate_limited')
})

test('verify-login-code is limited per IP (tokenEndpoints)', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const ip = randomIp()
  const body = { email: uniqueEmail('v'), code: '123456' }
  for (let i = 0; i < 3; i++) {
    const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, body, { ip })
    expectError(res, 401, 'invalid_code')
  }
  const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, body, { ip })
  expectError(res, 429, 'rate_limited')
})
