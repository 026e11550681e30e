// SPEC note 1: request-login-code never tells whether an address has an account, by its
// answer, by the mail it causes a caller to see, or by its timing.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:net'
import { after, before, test } from 'node:test'
import { setUser, tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  randomIp,
  startServer,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { quartileSpread, rounded, TIMING_ROUNDS, timeInterleaved } from '../../../test/timing.ts'
import { CODE_REQUEST_FLOOR_MS } from '../codes/service.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

/** A tenant with a real, a suspended and an unknown address. */
async function addresses() {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless' })
  const real = await member(server, t.slug)
  const suspended = await member(server, t.slug)
  await setUser(server, t.tenantId, suspended.id, { status: 'Suspended' })
  return { t, real: real.email, suspended: suspended.email, unknown: uniqueEmail('ghost') }
}

/** What a caller sees of an answer: status, body and headers (but the date). */
function visible(res: { status: number; body: unknown; headers: Headers }) {
  const headers = [...res.headers.entries()].filter(([k]) => k !== 'date' && k !== 'keep-alive')
  return { status: res.status, body: res.body, headers }
}

test('request-login-code answers byte for byte the same for a real, a suspended and an unknown address', async () => {
  const { t, real, suspended, unknown } = await addresses()
  const answers = []
  for (const email of [real, suspended, unknown]) {
    const res = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email })
    answers.push(visible(res))
  }
  assert.deepEqual(answers[0], { ...answers[0], status: 200, body: { ok: true } })
  assert.deepEqual(answers[1], answers[0])
  assert.deepEqual(answers[2], answers[0])
})

test('verify-login-code answers the same for an unknown address, a suspended user and a wrong code', async () => {
  const { t, real, suspended, unknown } = await addresses()
  const answers = []
  for (const email of [real, suspended, unknown]) {
    const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email,
      code: '000000',
    })
    expectError(res, 401, 'invalid_code')
    answers.push(visible(res))
  }
  assert.deepEqual(answers[1], answers[0])
  assert.deepEqual(answers[2], answers[0])
})

test('only the mailbox of a real account receives mail; unknown and suspended addresses get none and no rows', async () => {
  const { t, real, suspended, unknown } = await addresses()
  const beforeRows = await tenantSnapshot(server, t.tenantId)
  for (const email of [real, suspended, unknown, real, suspended, unknown]) {
    await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, { email })
  }
  await server.deps.mailer.drain()
  await sink.waitFor(real, 2)
  assert.equal(sink.to(real).length, 2, 'one mail per request for the real account')
  assert.equal(sink.to(suspended).length, 0)
  assert.equal(sink.to(unknown).length, 0)
  const afterRows = await tenantSnapshot(server, t.tenantId)
  assert.deepEqual(afterRows.users, beforeRows.users, 'no user is created without JIT signup')
  const newCodes = afterRows.codes.filter((c) => !beforeRows.codes.some((b) => b.id === c.id))
  assert.ok(newCodes.every((c) => c.userId === afterRows.users.find((u) => u.email === real)?.id))
})

test('timing: every answer waits for the same floor, so a real account is not slower to answer', async (ctx) => {
  const { t, real, suspended, unknown } = await addresses()
  const ask = (email: string) => async () => {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/auth/request-login-code`,
      { email },
      { ip: randomIp() },
    )
    assert.equal(res.status, 200)
  }
  const took = await timeInterleaved(
    { real: ask(real), suspended: ask(suspended), unknown: ask(unknown) },
    {
      rounds: TIMING_ROUNDS,
      // The sink parses the real account's mail in this process: not inside the next timing.
      between: () => server.deps.mailer.drain(),
    },
  )
  for (const [name, durations] of Object.entries(took)) {
    // The floor is a lower bound on every answer: it cannot be met by luck.
    assert.ok(Math.min(...durations) >= CODE_REQUEST_FLOOR_MS - 1, `${name}: ${rounded(took)}`)
  }
  // The work of any path fits inside the floor, so the kinds' quick answers agree.
  const spread = quartileSpread(took)
  ctx.diagnostic(`lower-quartile spread ${Math.round(spread)} ms`)
  assert.ok(
    spread < CODE_REQUEST_FLOOR_MS / 4,
    `lower-quartile spread ${Math.round(spread)} ms: ${rounded(took)}`,
  )
})

test('a mail server that hangs or refuses does not change the answer for a real account', async () => {
  // One mail server that accepts connections and never speaks, one port that refuses.
  const hang: Server = createServer(() => {})
  await new Promise<void>((resolve) => hang.listen(0, '127.0.0.1', resolve))
  const hangPort = (hang.address() as { port: number }).port
  for (const smtpUrl of [
    `smtp://127.0.0.1:${hangPort}?greetingTimeout=1000&connectionTimeout=1000&socketTimeout=1000`,
    'smtp://127.0.0.1:1?connectionTimeout=1000',
  ]) {
    const other = await startServer({ smtpUrl })
    try {
      const t = await tenantWith(other, { authPolicy: 'PasswordAndPasswordless' })
      const u = await member(other, t.slug)
      const realAnswer = await other.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
        email: u.email,
      })
      const unknownAnswer = await other.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
        email: uniqueEmail('ghost'),
      })
      assert.deepEqual(visible(realAnswer), visible(unknownAnswer))
      assert.deepEqual(realAnswer.body, { ok: true })
    } finally {
      await other.close()
    }
  }
  hang.close()
})
