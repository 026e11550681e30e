// CONTRACT §9: a reset or verification request for an unknown, deleted or Suspended
// address answers the same `{ ok: true }` in the same time and sends nothing; using a
// code answers the same 401 invalid_code for all of them and for a wrong code.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setUser, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { RESET, VERIFY_REQUEST } from '../../../test/fixtures/account.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import { randomIp, startTestServer, type TestServer, uniqueEmail } from '../../../test/helpers.ts'
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

/** A tenant with a real, a suspended, a deleted and an unknown address. */
async function addresses() {
  const t = await tenantWith(server, {})
  const real = await member(server, t.slug)
  const suspended = await member(server, t.slug)
  await setUser(server, t.tenantId, suspended.id, { status: 'Suspended' })
  const deleted = await member(server, t.slug)
  const gone = await server.request('DELETE', `/v1/${t.slug}/me`, undefined, {
    token: deleted.accessToken,
  })
  assert.equal(gone.status, 200)
  return {
    t,
    real: real.email,
    others: { suspended: suspended.email, deleted: deleted.email, unknown: uniqueEmail('ghost') },
  }
}

/** What a caller sees of an answer: status, body and headers (but the date). */
function visible(res: { status: number; body: unknown; headers: Headers }) {
  const headers = [...res.headers.entries()].filter(([k]) => k !== 'date' && k !== 'keep-alive')
  return { status: res.status, body: res.body, headers }
}

for (const path of [RESET, VERIFY_REQUEST]) {
  test(`${path}: unknown, deleted and suspended addresses answer like a real one, change nothing and get no mail`, async () => {
    const { t, real, others } = await addresses()
    const model = visible(await server.request('POST', `/v1/${t.slug}/${path}`, { email: real }))
    assert.deepEqual(model.body, { ok: true })
    assert.equal(model.status, 200)
    for (const [kind, email] of Object.entries(others)) {
      const res = await unchanged(
        server,
        t.tenantId,
        () => server.request('POST', `/v1/${t.slug}/${path}`, { email }),
        { sink },
      )
      assert.deepEqual(visible(res), model, kind)
    }
    await sink.waitFor(real, 1)
  })

  test(`${path}: every answer waits for the same floor, so a real account is not slower`, async (ctx) => {
    const { t, real, others } = await addresses()
    const ask = (email: string) => async () => {
      const res = await server.request(
        'POST',
        `/v1/${t.slug}/${path}`,
        { email },
        { ip: randomIp() },
      )
      assert.equal(res.status, 200)
    }
    const kinds = Object.fromEntries(
      Object.entries({ real, ...others }).map(([k, e]) => [k, ask(e)]),
    )
    const took = await timeInterleaved(kinds, {
      rounds: TIMING_ROUNDS,
      // The sink parses the real account's mail in this process: not inside the next timing.
      between: () => server.deps.mailer.drain(),
    })
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
}

test('reset-password and verify-email answer alike for an unknown, deleted or suspended address and a wrong code', async () => {
  const { t, real, others } = await addresses()
  for (const [path, extra] of [
    ['auth/reset-password', { newPassword: 'quartz-harbor-lantern-58' }],
    ['auth/verify-email', {}],
  ] as const) {
    const answers = []
    for (const email of [real, ...Object.values(others)]) {
      const res = await server.request('POST', `/v1/${t.slug}/${path}`, {
        email,
        code: '000000',
        ...extra,
      })
      expectError(res, 401, 'invalid_code')
      answers.push(visible(res))
    }
    for (const answer of answers.slice(1)) assert.deepEqual(answer, answers[0], path)
  }
})
