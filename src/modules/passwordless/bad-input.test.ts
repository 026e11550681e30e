// Every bad input to the passwordless routes answers the error envelope and changes
// nothing: no row, no audit event, no mail, no spent guess.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { codeRows, tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { mailedLoginCode, member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let slug: string
let tenantId: string
let email: string
let userId: string
let code: string
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  const t = await tenantWith(server, {
    authPolicy: 'PasswordAndPasswordless',
    passwordlessJitSignup: true,
  })
  slug = t.slug
  tenantId = t.tenantId
  const u = await member(server, slug)
  email = u.email
  userId = u.id
  code = await mailedLoginCode(server, sink, slug, email)
})
after(async () => {
  await sink.stop()
})

const longEmail = `${'a'.repeat(64)}@${'b'.repeat(185)}.com` // 254 + 1 characters

const requestBodies: [string, unknown][] = [
  ['no body fields', {}],
  ['email missing, other fields only', { mail: 'x@example.com' }],
  ['email a number', { email: 42 }],
  ['email null', { email: null }],
  ['email an array', { email: ['a@example.com'] }],
  ['email an object', { email: { address: 'a@example.com' } }],
  ['email not an address', { email: 'not-an-email' }],
  ['email empty', { email: '' }],
  ['email over 254 characters', { email: `x${longEmail}` }],
  ['a JSON array', [{ email: 'a@example.com' }]],
  ['a JSON string', 'a@example.com'],
]

const verifyBodies = (): [string, unknown][] => [
  ['code missing', { email }],
  ['email missing', { code }],
  ['code a number', { email, code: Number(code) }],
  ['code of 5 digits', { email, code: code.slice(0, 5) }],
  ['code of 7 digits', { email, code: `${code}0` }],
  ['code with letters', { email, code: 'abcdef' }],
  ['code with spaces', { email, code: ` ${code.slice(0, 5)}` }],
  ['code of full-width digits', { email, code: '１２３４５６' }],
  ['totpCode of 5 digits', { email, code, totpCode: '12345' }],
  ['totpCode a number', { email, code, totpCode: 123456 }],
  ['email not an address', { email: 'nobody', code }],
  ['email over 254 characters', { email: `x${longEmail}`, code }],
  ['a JSON array', [{ email, code }]],
]

async function expectNothingChanged(run: () => Promise<void>) {
  // Mail an earlier test queued may still be on its way: let it land before counting.
  await server.deps.mailer.drain()
  const before = await tenantSnapshot(server, tenantId)
  const mails = sink.messages.length
  await run()
  await server.deps.mailer.drain()
  assert.deepEqual(await tenantSnapshot(server, tenantId), before)
  assert.equal(sink.messages.length, mails, 'no mail')
}

describe('request-login-code refuses bad input with 400 and changes nothing', () => {
  for (const [name, body] of requestBodies) {
    test(name, async () => {
      await expectNothingChanged(async () => {
        const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, body)
        expectError(res, 400, 'validation')
      })
    })
  }

  test('malformed JSON', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, undefined, {
        raw: '{"email": "a@example.com"',
      })
      expectError(res, 400, 'malformed_json')
    })
  })

  test('a body that is not JSON', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, undefined, {
        raw: `email=${email}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expectError(res, 400, 'unsupported_media_type')
    })
  })

  test('an oversized body', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, {
        email,
        padding: 'x'.repeat(70 * 1024),
      })
      expectError(res, 400, 'body_too_large')
    })
  })

  test('an unknown tenant: 404, and the address gets nothing', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', '/v1/no-such-tenant-zz/auth/request-login-code', {
        email,
      })
      expectError(res, 404, 'tenant_not_found')
    })
  })

  test('unknown properties are ignored, never applied', async () => {
    const res = await server.request('POST', `/v1/${slug}/auth/request-login-code`, {
      email: 'fresh-jit@example.com',
      role: 'Admin',
      status: 'Active',
      tenantId: '00000000-0000-7000-8000-000000000000',
    })
    assert.deepEqual(res.body, { ok: true })
    const rows = await tenantSnapshot(server, tenantId)
    const created = rows.users.find((u) => u.emailNormalized === 'fresh-jit@example.com')
    assert.equal(created?.role, 'Member')
    assert.equal(created?.status, 'Pending')
    const mail = await sink.waitFor('fresh-jit@example.com')
    assert.match(SmtpSink.code(mail), /^\d{6}$/)
  })
})

describe('verify-login-code refuses bad input with 400, changes nothing and spends no guess', () => {
  test('each bad body', async () => {
    for (const [name, body] of verifyBodies()) {
      await expectNothingChanged(async () => {
        const res = await server.request('POST', `/v1/${slug}/auth/verify-login-code`, body)
        assert.equal(res.status, 400, name)
        expectError(res, 400, 'validation')
      })
    }
    const [row] = await codeRows(server, tenantId, userId)
    assert.equal(row.attempts, 0)
    assert.equal(row.closedAt, null)
  })

  test('malformed JSON', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', `/v1/${slug}/auth/verify-login-code`, undefined, {
        raw: `{"email":"${email}","code":"${code}"`,
      })
      expectError(res, 400, 'malformed_json')
    })
  })

  test('an unknown tenant: 404', async () => {
    await expectNothingChanged(async () => {
      const res = await server.request('POST', '/v1/no-such-tenant-zz/auth/verify-login-code', {
        email,
        code,
      })
      expectError(res, 404, 'tenant_not_found')
    })
  })

  test('the code still signs in after all the refused requests', async () => {
    const res = await server.request('POST', `/v1/${slug}/auth/verify-login-code`, { email, code })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })
})
