// Race and isolation rules: a parallel burst of guesses gets no more tries than the
// limits allow (CONTRACT §6), a code is spent once, and a code issued for one address or
// tenant never works for another (STYLE: security tests named after their rule).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditMark, auditSince, codeRows, tenantSnapshot, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  mailedLoginCode,
  member,
  otherCode,
  tenantWith,
} from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
  randomIp,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  // 21 failures per account: 20 parallel wrong guesses and one more fit, the 22nd does not.
  server = await startTestServer(t, {
    smtpUrl: sink.url,
    limits: { ...GENEROUS_LIMITS, accountFailures: { points: 21, seconds: 3600 } },
  })
})
after(async () => {
  await sink.stop()
})

const verify = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/verify-login-code`, body, { ip: randomIp() })

test('20 parallel wrong guesses count as 20: the code burns after 5 and the account budget sees all 20', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  const code = await mailedLoginCode(server, sink, t.slug, u.email)
  const mark = await auditMark(server, t.tenantId)
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      verify(t.slug, { email: u.email, code: otherCode(code, i + 1) }),
    ),
  )
  for (const res of answers) expectError(res, 401, 'invalid_code')
  const [row] = await codeRows(server, t.tenantId, u.id)
  assert.equal(row.attempts, 5, 'no more than 5 guesses reached the code')
  assert.equal(row.closedReason, 'burned')
  const failed = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'PasswordlessCodeFailed',
  )
  assert.equal(failed.length, 20)
  // The right code is refused: burned (the 21st failure, still within the budget) ...
  expectError(await verify(t.slug, { email: u.email, code }), 401, 'invalid_code')
  // ... and the 22nd try is held by the account budget, which counted all 20.
  expectError(await verify(t.slug, { email: u.email, code }), 429, 'rate_limited')
})

test('parallel sign-ins with one correct code: exactly one succeeds', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  const code = await mailedLoginCode(server, sink, t.slug, u.email)
  const before = await tenantSnapshot(server, t.tenantId)
  const answers = await Promise.all(
    Array.from({ length: 6 }, () => verify(t.slug, { email: u.email, code })),
  )
  assert.equal(
    answers.filter((r) => r.status === 200).length,
    1,
    JSON.stringify(answers.map((r) => r.body)),
  )
  for (const r of answers.filter((x) => x.status !== 200)) expectError(r, 401, 'invalid_code')
  const after = await tenantSnapshot(server, t.tenantId)
  assert.equal(after.sessions.length, before.sessions.length + 1)
})

test('a code issued for one address never works for another address of the tenant', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const alice = await member(server, t.slug)
  const bob = await member(server, t.slug)
  const aliceCode = await mailedLoginCode(server, sink, t.slug, alice.email)
  const bobCode = await mailedLoginCode(server, sink, t.slug, bob.email)
  if (aliceCode !== bobCode) {
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await verify(t.slug, { email: bob.email, code: aliceCode }), 401, 'invalid_code')
    assert.deepEqual((await tenantSnapshot(server, t.tenantId)).sessions, before.sessions)
  }
  // Alice's code is untouched by Bob's attempt and still signs Alice in.
  const [aliceRow] = await codeRows(server, t.tenantId, alice.id)
  assert.equal(aliceRow.attempts, 0)
  const ok = await verify(t.slug, { email: alice.email, code: aliceCode })
  assert.equal(ok.status, 200)
  assert.equal(ok.body.user.id, alice.id)
})

test('a code issued in one tenant never works in another, even for the same address', async () => {
  const t1 = await tenantWith(server, {
    authPolicy: 'PasswordAndPasswordless',
    passwordlessJitSignup: true,
  })
  const t2 = await tenantWith(server, {
    authPolicy: 'PasswordAndPasswordless',
    passwordlessJitSignup: true,
  })
  const email = uniqueEmail('both')
  const code1 = await mailedLoginCode(server, sink, t1.slug, email)
  const code2 = await mailedLoginCode(server, sink, t2.slug, email)
  if (code1 !== code2) {
    const before = await tenantSnapshot(server, t2.tenantId)
    expectError(await verify(t2.slug, { email, code: code1 }), 401, 'invalid_code')
    assert.deepEqual((await tenantSnapshot(server, t2.tenantId)).sessions, before.sessions)
  }
  const ok1 = await verify(t1.slug, { email, code: code1 })
  assert.equal(ok1.status, 200)
  assert.equal(ok1.body.user.tenantId, t1.tenantId)
  // And the other tenant's token is refused here.
  const me = await server.request('GET', `/v1/${t2.slug}/me`, undefined, {
    token: ok1.body.accessToken,
  })
  assert.equal(me.status, 401)
})

test('parallel code requests for one address leave exactly one open code', async () => {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const u = await member(server, t.slug)
  await Promise.all(
    Array.from({ length: 5 }, () =>
      server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email: u.email }),
    ),
  )
  const rows = await codeRows(server, t.tenantId, u.id)
  assert.equal(rows.length, 5)
  assert.equal(rows.filter((r) => r.closedAt === null).length, 1)
})

test('parallel JIT requests for one new address create one Pending member', async () => {
  const t = await tenantWith(server, {
    authPolicy: 'PasswordlessOnly',
    passwordlessJitSignup: true,
  })
  const email = uniqueEmail('jit')
  const answers = await Promise.all(
    Array.from({ length: 5 }, () =>
      server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email }),
    ),
  )
  for (const r of answers) assert.deepEqual(r.body, { ok: true })
  const rows = await tenantSnapshot(server, t.tenantId)
  assert.equal(rows.users.filter((u) => u.emailNormalized === email).length, 1)
  assert.equal((await userByEmail(server, t.tenantId, email)).status, 'Pending')
  assert.equal(rows.audit.filter((e) => e.action === 'UserSignup' && e.email === email).length, 1)
})
