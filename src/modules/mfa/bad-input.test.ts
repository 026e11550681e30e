// Every bad input to the MFA routes answers the error envelope and changes nothing; and
// SPEC note 11: the password lengths of the Limits table (1 to 1024 to sign in or enrol,
// 12 to 1024 to create or change one).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { tenantSnapshot, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp } from '../../../test/fixtures/mfa.ts'
import { mailedLoginCode, member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let slug: string
let tenantId: string
let email: string
let token: string
let loginCode: string
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  const t = await tenantWith(server, {
    authPolicy: 'PasswordAndPasswordless',
    mfaPolicy: 'Required',
  })
  slug = t.slug
  tenantId = t.tenantId
  const u = await member(server, slug)
  email = u.email
  token = u.accessToken
  loginCode = await mailedLoginCode(server, sink, slug, email)
  await server.request('POST', `/v1/${slug}/mfa/totp/enroll`, undefined, { token })
})
after(async () => {
  await sink.stop()
})

const long = 'x'.repeat(1025)
const badEmail = `${'a'.repeat(64)}@${'b'.repeat(186)}.com`

const cases = (): [string, string, unknown][] => [
  ['verify: code missing', 'mfa/totp/verify', {}],
  ['verify: code a number', 'mfa/totp/verify', { code: 123456 }],
  ['verify: code of 5 digits', 'mfa/totp/verify', { code: '12345' }],
  ['verify: code with letters', 'mfa/totp/verify', { code: '12a456' }],
  ['verify: code an array', 'mfa/totp/verify', { code: ['123456'] }],
  ['initial-enroll: email missing', 'auth/totp/initial-enroll', { password: STRONG_PASSWORD }],
  [
    'initial-enroll: email invalid',
    'auth/totp/initial-enroll',
    { email: 'x', password: STRONG_PASSWORD },
  ],
  [
    'initial-enroll: email too long',
    'auth/totp/initial-enroll',
    { email: badEmail, password: STRONG_PASSWORD },
  ],
  ['initial-enroll: password empty', 'auth/totp/initial-enroll', { email, password: '' }],
  ['initial-enroll: password over 1024', 'auth/totp/initial-enroll', { email, password: long }],
  ['initial-enroll: password a number', 'auth/totp/initial-enroll', { email, password: 12345678 }],
  [
    'initial-enroll: loginCode of 5 digits',
    'auth/totp/initial-enroll',
    { email, loginCode: '12345' },
  ],
  ['initial-enroll: loginCode a number', 'auth/totp/initial-enroll', { email, loginCode: 123456 }],
  [
    'initial-enroll: both factors',
    'auth/totp/initial-enroll',
    { email, password: STRONG_PASSWORD, loginCode },
  ],
  ['initial-enroll: neither factor', 'auth/totp/initial-enroll', { email }],
  [
    'initial-verify: code missing',
    'auth/totp/initial-verify',
    { email, password: STRONG_PASSWORD },
  ],
  [
    'initial-verify: code of 7 digits',
    'auth/totp/initial-verify',
    { email, password: STRONG_PASSWORD, code: '1234567' },
  ],
  [
    'initial-verify: totpCode a number',
    'auth/totp/initial-verify',
    { email, password: STRONG_PASSWORD, totpCode: 123456 },
  ],
  [
    'initial-verify: both factors',
    'auth/totp/initial-verify',
    { email, password: STRONG_PASSWORD, loginCode, code: '123456' },
  ],
  ['initial-verify: neither factor', 'auth/totp/initial-verify', { email, code: '123456' }],
  [
    'initial-verify: password over 1024',
    'auth/totp/initial-verify',
    { email, password: long, code: '123456' },
  ],
  ['request-email-otp: password missing', 'auth/request-email-otp', { email }],
  ['request-email-otp: email missing', 'auth/request-email-otp', { password: STRONG_PASSWORD }],
  ['request-email-otp: password empty', 'auth/request-email-otp', { email, password: '' }],
  ['request-email-otp: password over 1024', 'auth/request-email-otp', { email, password: long }],
  [
    'request-email-otp: email a number',
    'auth/request-email-otp',
    { email: 1, password: STRONG_PASSWORD },
  ],
  [
    'login: totpCode of 5 digits',
    'auth/login',
    { email, password: STRONG_PASSWORD, totpCode: '12345' },
  ],
  [
    'login: emailOtpCode a number',
    'auth/login',
    { email, password: STRONG_PASSWORD, emailOtpCode: 123456 },
  ],
]

describe('bad bodies: 400 validation, nothing changes', () => {
  for (const [name, path, body] of cases()) {
    test(name, async () => {
      await unchanged(
        server,
        tenantId,
        async () => {
          const res = await server.request('POST', `/v1/${slug}/${path}`, body, { token })
          expectError(res, 400, 'validation')
        },
        { sink },
      )
    })
  }

  test('malformed JSON on every MFA route', async () => {
    for (const path of [
      'mfa/totp/verify',
      'auth/totp/initial-enroll',
      'auth/totp/initial-verify',
      'auth/request-email-otp',
    ]) {
      await unchanged(
        server,
        tenantId,
        async () => {
          const res = await server.request('POST', `/v1/${slug}/${path}`, undefined, {
            token,
            raw: '{"code":',
          })
          expectError(res, 400, 'malformed_json')
        },
        { sink },
      )
    }
  })

  test('an unknown tenant answers 404 before anything else', async () => {
    for (const path of [
      'mfa/totp/enroll',
      'mfa/totp/verify',
      'auth/totp/initial-enroll',
      'auth/totp/initial-verify',
      'auth/request-email-otp',
    ]) {
      await unchanged(
        server,
        tenantId,
        async () => {
          const res = await server.request(
            'POST',
            `/v1/no-such-tenant-zz/${path}`,
            { code: 'bad' },
            { token },
          )
          expectError(res, 404, 'tenant_not_found')
        },
        { sink },
      )
    }
  })

  test('the Bearer routes refuse a missing, malformed or foreign token with 401', async () => {
    const other = await tenantWith(server, {})
    for (const path of ['mfa/totp/enroll', 'mfa/totp/verify']) {
      await unchanged(
        server,
        tenantId,
        async () => {
          expectError(
            await server.request('POST', `/v1/${slug}/${path}`, { code: '123456' }),
            401,
            'token_missing',
          )
          const bad = await server.request(
            'POST',
            `/v1/${slug}/${path}`,
            { code: '123456' },
            { token: 'not-a-jwt' },
          )
          expectError(bad, 401, 'token_invalid')
          const foreign = await server.request(
            'POST',
            `/v1/${slug}/${path}`,
            { code: '123456' },
            { token: other.admin.accessToken },
          )
          expectError(foreign, 401, 'token_invalid')
          const apiKey = await server.request(
            'POST',
            `/v1/${slug}/${path}`,
            { code: '123456' },
            { token: `ak_live_${'x'.repeat(43)}` },
          )
          expectError(apiKey, 401, 'user_token_required')
        },
        { sink },
      )
    }
  })
})

describe('SPEC note 11: password lengths', () => {
  test('signing in accepts 1 to 1024 characters: 1024 is checked (401), 1025 is refused (400)', async () => {
    const t = await tenantWith(server, {})
    const u = await member(server, t.slug)
    const at1024 = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: 'y'.repeat(1024),
    })
    expectError(at1024, 401, 'invalid_credentials')
    const at1 = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: 'y',
    })
    expectError(at1, 401, 'invalid_credentials')
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/login`, { email: u.email, password: long }),
      400,
      'validation',
    )
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/login`, { email: u.email, password: '' }),
      400,
      'validation',
    )
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('creating a password needs 12 to 1024 characters', async () => {
    const t = await tenantWith(server, {})
    const before = await tenantSnapshot(server, t.tenantId)
    const short = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: 'eleven-char',
    })
    expectError(short, 400, 'validation')
    const tooLong = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: long,
    })
    expectError(tooLong, 400, 'validation')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    const twelve = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: 'twelve-chars',
    })
    assert.equal(twelve.status, 200, JSON.stringify(twelve.body))
  })

  test('the enrolment routes check a 1024-character password rather than refusing its shape', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const res = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-enroll`, {
      email: u.email,
      password: 'z'.repeat(1024),
    })
    expectError(res, 401, 'invalid_credentials')
    const otp = await server.request('POST', `/v1/${t.slug}/auth/request-email-otp`, {
      email: u.email,
      password: 'z'.repeat(1024),
    })
    expectError(otp, 401, 'invalid_credentials')
  })
})

test('the enrolment still completes after all the refused requests', async () => {
  const t = await tenantWith(server, { mfaPolicy: 'Required' })
  const u = await member(server, t.slug)
  assert.match(await enrolTotp(server, t.slug, u.accessToken), /^[A-Z2-7]+$/)
})
