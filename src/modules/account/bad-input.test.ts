// Every bad input to the reset and verification routes answers the error envelope and
// changes nothing: no row, no audit event, no mail, no guess counted against a code.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { codeRows, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { mailedResetCode, mailedVerifyCode } from '../../../test/fixtures/account.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let slug: string
let tenantId: string
let email: string
let userId: string
let token: string
let resetCode: string
let verifyCode: string
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  const t = await tenantWith(server, {})
  slug = t.slug
  tenantId = t.tenantId
  const u = await member(server, slug)
  email = u.email
  userId = u.id
  token = u.accessToken
  resetCode = await mailedResetCode(server, sink, slug, email)
  verifyCode = await mailedVerifyCode(server, sink, slug, email)
})
after(async () => {
  await sink.stop()
})

const longEmail = `x${'a'.repeat(64)}@${'b'.repeat(185)}.com` // 255 characters
const NEW_PASSWORD = 'quartz-harbor-lantern-58'

const emailBodies = (): [string, unknown][] => [
  ['email a number', { email: 42 }],
  ['email null', { email: null }],
  ['email an array', { email: [email] }],
  ['email not an address', { email: 'not-an-email' }],
  ['email empty', { email: '' }],
  ['email over 254 characters', { email: longEmail }],
  ['email with a zero-width space', { email: `a\u200b${email}` }],
  ['email with a NUL', { email: `a\u0000${email}` }],
  ['a JSON array', [{ email }]],
  ['a JSON string', email],
]

const codeBodies = (base: Record<string, unknown>, code: string): [string, unknown][] => [
  ['code missing', { ...base }],
  ['code a number', { ...base, code: Number(code) }],
  ['code of 5 digits', { ...base, code: code.slice(0, 5) }],
  ['code of 7 digits', { ...base, code: `${code}0` }],
  ['code with letters', { ...base, code: 'abcdef' }],
  ['code of full-width digits', { ...base, code: '１２３４５６' }],
  ['totpCode of 5 digits', { ...base, code, totpCode: '12345' }],
  ['totpCode a number', { ...base, code, totpCode: 123456 }],
  ['recoveryCode empty', { ...base, code, recoveryCode: '' }],
  ['recoveryCode too long', { ...base, code, recoveryCode: 'a'.repeat(65) }],
  ['recoveryCode a number', { ...base, code, recoveryCode: 1 }],
  [
    'totpCode and recoveryCode both',
    { ...base, code, totpCode: '123456', recoveryCode: 'aaaaa-bbbbb' },
  ],
]

const resetBodies = (): [string, unknown][] => [
  ...codeBodies({ email, newPassword: NEW_PASSWORD }, resetCode),
  ['email missing', { code: resetCode, newPassword: NEW_PASSWORD }],
  ['newPassword missing', { email, code: resetCode }],
  ['newPassword too short', { email, code: resetCode, newPassword: 'short' }],
  ['newPassword over 1024 characters', { email, code: resetCode, newPassword: 'x'.repeat(1025) }],
  ['newPassword a number', { email, code: resetCode, newPassword: 123456789012345 }],
  ...emailBodies().map(([name, body]): [string, unknown] => [
    name,
    typeof body === 'object' && body && !Array.isArray(body)
      ? { ...body, code: resetCode, newPassword: NEW_PASSWORD }
      : body,
  ]),
]

/** Sends each body; each must be 400 and change nothing, mail included. */
async function refuseEach(path: string, bodies: [string, unknown][], options = {}) {
  for (const [name, body] of bodies) {
    const res = await unchanged(
      server,
      tenantId,
      () => server.request('POST', `/v1/${slug}/${path}`, body, options),
      { sink },
    )
    assert.equal(res.status, 400, `${name}: ${JSON.stringify(res.body)}`)
    expectError(res, 400, 'validation')
  }
}

describe('every route refuses bad bodies with 400 and changes nothing', () => {
  test('auth/request-password-reset', async () => {
    await refuseEach('auth/request-password-reset', [['no email', {}], ...emailBodies()])
  })

  test('auth/reset-password', async () => {
    await refuseEach('auth/reset-password', resetBodies())
  })

  test('auth/request-email-verification, without and with a token', async () => {
    await refuseEach('auth/request-email-verification', [['no email', {}], ...emailBodies()])
    await refuseEach('auth/request-email-verification', [['email with a token', { email }]], {
      token,
    })
  })

  test('auth/verify-email, without and with a token', async () => {
    await refuseEach('auth/verify-email', [
      ...codeBodies({ email }, verifyCode),
      ['email missing', { code: verifyCode }],
      ...emailBodies().map(([name, body]): [string, unknown] => [
        name,
        typeof body === 'object' && body && !Array.isArray(body)
          ? { ...body, code: verifyCode }
          : body,
      ]),
    ])
    await refuseEach('auth/verify-email', [...codeBodies({}, verifyCode)], { token })
  })

  test('no guess was counted against either code', async () => {
    const rows = await codeRows(server, tenantId, userId)
    assert.deepEqual(
      rows.map((r) => [r.purpose, r.attempts, r.closedAt]),
      [
        ['reset', 0, null],
        ['verify', 0, null],
      ],
    )
  })
})

describe('malformed requests', () => {
  const paths = [
    'auth/request-password-reset',
    'auth/reset-password',
    'auth/request-email-verification',
    'auth/verify-email',
  ]

  test('malformed JSON, a body that is not JSON, an oversized body', async () => {
    for (const path of paths) {
      const send = (body: unknown, options = {}) =>
        unchanged(
          server,
          tenantId,
          () => server.request('POST', `/v1/${slug}/${path}`, body, options),
          {
            sink,
          },
        )
      expectError(await send(undefined, { raw: `{"email":"${email}"` }), 400, 'malformed_json')
      const form = await send(undefined, {
        raw: `email=${email}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      })
      expectError(form, 400, 'unsupported_media_type')
      const big = await send({ email, padding: 'x'.repeat(70 * 1024) })
      expectError(big, 400, 'body_too_large')
    }
  })

  test('an unknown tenant: 404 before anything else', async () => {
    for (const path of paths) {
      const res = await unchanged(
        server,
        tenantId,
        () =>
          server.request('POST', `/v1/no-such-tenant-zz/${path}`, {
            email,
            code: resetCode,
            newPassword: NEW_PASSWORD,
          }),
        { sink },
      )
      expectError(res, 404, 'tenant_not_found')
    }
  })

  test('unknown properties are ignored, never applied', async () => {
    const res = await server.request('POST', `/v1/${slug}/auth/reset-password`, {
      email,
      code: resetCode,
      newPassword: NEW_PASSWORD,
      role: 'Admin',
      userId: '00000000-0000-7000-8000-000000000000',
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.role, 'Member')
    assert.equal(res.body.user.id, userId)
  })
})
