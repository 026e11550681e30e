// MFA recovery codes (CONTRACT §9): ten codes shown once at TOTP activation, stored only
// as keyed hashes, each accepted once instead of a TOTP code at sign-in (atomically, even
// by parallel sign-ins), regenerated with a TOTP code, removed by an admin TOTP reset.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { actionsSince, auditMark, auditSince, tenantSnapshot, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { mailedLoginCode, member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  GENEROUS_LIMITS,
  STRONG_PASSWORD,
  startSecondInstance,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq } from '../../db/orm.ts'
import { recoveryCodes } from '../../db/schema.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const CODE = /^[a-z2-7]{5}-[a-z2-7]{5}$/

const login = (slug: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/login`, body)
const regenerate = (slug: string, body: unknown, token?: string) =>
  server.request('POST', `/v1/${slug}/mfa/recovery-codes/regenerate`, body, { token })

async function codeRows(tenantId: string, userId: string) {
  return server.deps.db
    .select()
    .from(recoveryCodes)
    .where(and(eq(recoveryCodes.tenantId, tenantId), eq(recoveryCodes.userId, userId)))
}

/** A member of a tenant asking TOTP of enrolled users, enrolled, with its codes. */
async function enrolled(policy: Parameters<typeof tenantWith>[1] = { mfaPolicy: 'Optional' }) {
  const t = await tenantWith(server, { authPolicy: 'PasswordAndPasswordless', ...policy })
  const u = await member(server, t.slug)
  const { secret, recoveryCodes: codes } = await enrolWithRecoveryCodes(
    server,
    t.slug,
    u.accessToken,
  )
  return { t, u, secret, codes }
}

describe('codes issued when TOTP is activated', () => {
  test('mfa/totp/verify answers ten distinct codes xxxxx-xxxxx, stored only as keyed hashes', async () => {
    const { t, u, codes } = await enrolled()
    assert.equal(codes.length, 10)
    for (const code of codes) assert.match(code, CODE)
    assert.equal(new Set(codes).size, 10)
    const rows = await codeRows(t.tenantId, u.id)
    assert.equal(rows.length, 10)
    for (const row of rows) {
      assert.match(row.codeHash, /^v1:[A-Za-z0-9_-]{43}$/, 'a versioned HMAC, nothing else')
      assert.equal(row.usedAt, null)
      for (const code of codes) {
        assert.ok(!row.codeHash.includes(code.replace('-', '')), 'the code is not stored')
      }
    }
  })

  test('auth/totp/initial-verify adds the codes to its envelope, in the activation transaction', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Required' })
    const u = await member(server, t.slug)
    const begun = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-enroll`, {
      email: u.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(begun.status, 200, JSON.stringify(begun.body))
    // A wrong authenticator code activates nothing and stores no codes.
    const wrong = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-verify`, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: totpAt(server, begun.body.secret, 10),
    })
    expectError(wrong, 401, 'invalid_mfa_code')
    assert.equal((await codeRows(t.tenantId, u.id)).length, 0)
    const res = await server.request('POST', `/v1/${t.slug}/auth/totp/initial-verify`, {
      email: u.email,
      password: STRONG_PASSWORD,
      code: totpAt(server, begun.body.secret),
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), [
      'accessToken',
      'accessTokenExpiresIn',
      'recoveryCodes',
      'refreshToken',
      'refreshTokenExpiresIn',
      'user',
    ])
    assert.equal(res.body.recoveryCodes.length, 10)
    for (const code of res.body.recoveryCodes) assert.match(code, CODE)
    assert.equal((await codeRows(t.tenantId, u.id)).length, 10)
    // They work at the next sign-in.
    server.clock.advance(30)
    const next = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: res.body.recoveryCodes[0],
    })
    assert.equal(next.status, 200, JSON.stringify(next.body))
  })
})

describe('a recovery code instead of a TOTP code', () => {
  test('auth/login: a session, the code spent, MfaRecoveryCodeUsed with the codes remaining', async () => {
    const { t, u, codes } = await enrolled()
    const mark = await auditMark(server, t.tenantId)
    const res = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[0],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.user.id, u.id)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['MfaRecoveryCodeUsed', 'SessionCreated', 'UserLogin'],
    )
    assert.deepEqual(events[0].metadata, { remaining: 9 })
    assert.equal(events[0].userId, u.id)
    const spent = (await codeRows(t.tenantId, u.id)).filter((r) => r.usedAt !== null)
    assert.equal(spent.length, 1)
    // The second one leaves 8.
    const again = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[1],
    })
    assert.equal(again.status, 200, JSON.stringify(again.body))
    const used = (await auditSince(server, t.tenantId, mark)).filter(
      (e) => e.action === 'MfaRecoveryCodeUsed',
    )
    assert.deepEqual(used.map((e) => e.metadata.remaining).sort(), [8, 9])
  })

  test('compared case-insensitively, with the hyphen and spaces optional', async () => {
    const { t, u, codes } = await enrolled()
    const typed = [
      codes[0].toUpperCase(),
      codes[1].replace('-', ''),
      ` ${codes[2].slice(0, 5)} ${codes[2].slice(6)} `,
      codes[3].replace('-', ' - ').toUpperCase(),
    ]
    for (const recoveryCode of typed) {
      const res = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, recoveryCode })
      assert.equal(res.status, 200, `${recoveryCode}: ${JSON.stringify(res.body)}`)
    }
    assert.equal((await codeRows(t.tenantId, u.id)).filter((r) => r.usedAt).length, 4)
  })

  test('auth/verify-login-code: the login code and the recovery code are both spent', async () => {
    const { t, u, codes } = await enrolled()
    const code = await mailedLoginCode(server, sink, t.slug, u.email)
    // methods keep saying totp: a recovery code is a way of giving the TOTP factor.
    const asked = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: u.email,
      code,
    })
    expectError(asked, 401, 'mfa_required')
    assert.deepEqual(asked.body.details.methods, ['totp'])
    const res = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: u.email,
      code,
      recoveryCode: codes[4],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const replay = await server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
      email: u.email,
      code,
      recoveryCode: codes[5],
    })
    expectError(replay, 401, 'invalid_code')
    assert.equal((await codeRows(t.tenantId, u.id)).filter((r) => r.usedAt).length, 1)
  })

  test('details.methods of a password login still say totp (and email)', async () => {
    const { t, u } = await enrolled()
    const res = await login(t.slug, { email: u.email, password: STRONG_PASSWORD })
    expectError(res, 401, 'mfa_required')
    assert.deepEqual(res.body.details.methods, ['totp', 'email'])
  })

  test('a spent code is 401 invalid_mfa_code, audited as a failed sign-in, no session', async () => {
    const { t, u, codes } = await enrolled()
    const first = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[0],
    })
    assert.equal(first.status, 200)
    const before = await tenantSnapshot(server, t.tenantId, { audit: false })
    const mark = await auditMark(server, t.tenantId)
    const res = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[0].toUpperCase(),
    })
    expectError(res, 401, 'invalid_mfa_code')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.metadata.reason]),
      [['UserLoginFailed', 'invalid_mfa_code']],
    )
  })

  test('a wrong code (well formed, garbage, another user’s) is 401 invalid_mfa_code and changes nothing else', async () => {
    const { t, u } = await enrolled()
    const other = await member(server, t.slug)
    const { recoveryCodes: theirs } = await enrolWithRecoveryCodes(
      server,
      t.slug,
      other.accessToken,
    )
    for (const recoveryCode of ['aaaaa-aaaaa', '0000000000', 'x', '日本語', theirs[0]]) {
      const before = await tenantSnapshot(server, t.tenantId, { audit: false })
      const mark = await auditMark(server, t.tenantId)
      const res = await login(t.slug, { email: u.email, password: STRONG_PASSWORD, recoveryCode })
      expectError(res, 401, 'invalid_mfa_code')
      assert.deepEqual(await tenantSnapshot(server, t.tenantId, { audit: false }), before)
      assert.deepEqual(await actionsSince(server, t.tenantId, mark), ['UserLoginFailed'])
    }
    // The other user's code is still theirs to use.
    const ok = await login(t.slug, {
      email: other.email,
      password: STRONG_PASSWORD,
      recoveryCode: theirs[0],
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('a wrong recovery code counts against the account like a wrong TOTP code (CONTRACT §6)', async (ctx) => {
    const tight = await startTestServer(ctx, {
      limits: { ...GENEROUS_LIMITS, accountFailures: { points: 2, seconds: 3600 } },
    })
    const t = await tenantWith(tight, { mfaPolicy: 'Optional' })
    const u = await member(tight, t.slug)
    const { recoveryCodes: codes } = await enrolWithRecoveryCodes(tight, t.slug, u.accessToken)
    const body = { email: u.email, password: STRONG_PASSWORD, recoveryCode: 'aaaaa-aaaaa' }
    for (let i = 0; i < 2; i++) {
      expectError(
        await tight.request('POST', `/v1/${t.slug}/auth/login`, body),
        401,
        'invalid_mfa_code',
      )
    }
    const held = await tight.request('POST', `/v1/${t.slug}/auth/login`, {
      ...body,
      recoveryCode: codes[0],
    })
    expectError(held, 429, 'rate_limited')
  })

  test('totpCode and recoveryCode together: 400 validation before the password is checked', async () => {
    const { t, u, secret, codes } = await enrolled()
    const both = {
      email: u.email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(server, secret),
      recoveryCode: codes[0],
    }
    const res = await unchanged(server, t.tenantId, () => login(t.slug, both))
    expectValidation(res)
    const byCode = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
        email: u.email,
        code: '123456',
        totpCode: totpAt(server, secret),
        recoveryCode: codes[0],
      }),
    )
    expectValidation(byCode)
  })

  test('bad recoveryCode values (login, verify-login-code): 400 validation, nothing changes', async () => {
    const { t, u } = await enrolled()
    for (const recoveryCode of [123456, ['aaaaa-aaaaa'], { a: 1 }, '', 'a'.repeat(65), null]) {
      const res = await unchanged(server, t.tenantId, () =>
        login(t.slug, { email: u.email, password: STRONG_PASSWORD, recoveryCode }),
      )
      expectValidation(res, 'body.recoveryCode')
      const byCode = await unchanged(server, t.tenantId, () =>
        server.request('POST', `/v1/${t.slug}/auth/verify-login-code`, {
          email: u.email,
          code: '123456',
          recoveryCode,
        }),
      )
      expectValidation(byCode, 'body.recoveryCode')
    }
  })

  test('recovery-code.single-use: two parallel sign-ins with one code, exactly one wins', async () => {
    const { t, u, codes } = await enrolled()
    const before = await tenantSnapshot(server, t.tenantId)
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        login(t.slug, { email: u.email, password: STRONG_PASSWORD, recoveryCode: codes[7] }),
      ),
    )
    assert.equal(
      answers.filter((r) => r.status === 200).length,
      1,
      JSON.stringify(answers.map((a) => a.body)),
    )
    for (const r of answers.filter((a) => a.status !== 200)) expectError(r, 401, 'invalid_mfa_code')
    const after = await tenantSnapshot(server, t.tenantId)
    assert.equal(after.sessions.length, before.sessions.length + 1)
    assert.equal(after.recoveryCodes.filter((r) => r.usedAt).length, 1)
    const used = after.audit.filter((e) => e.action === 'MfaRecoveryCodeUsed')
    assert.equal(used.length, 1)
  })

  test('codes made before a key rotation still work: every key version is tried', async () => {
    const { t, u, secret, codes } = await enrolled()
    const rotated = await startSecondInstance(server, {
      encryptionKeys: [
        { version: 'v2', key: Buffer.alloc(32, 9) },
        { version: 'v1', key: Buffer.alloc(32, 7) },
      ],
    })
    try {
      const res = await rotated.request('POST', `/v1/${t.slug}/auth/login`, {
        email: u.email,
        password: STRONG_PASSWORD,
        recoveryCode: codes[0],
      })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      // New codes are made under the current key.
      const fresh = await rotated.request(
        'POST',
        `/v1/${t.slug}/mfa/recovery-codes/regenerate`,
        { totpCode: totpAt(server, secret) },
        { token: res.body.accessToken },
      )
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body))
      const rows = await codeRows(t.tenantId, u.id)
      assert.equal(rows.length, 10)
      assert.ok(rows.every((r) => r.codeHash.startsWith('v2:')))
    } finally {
      await rotated.close()
    }
  })
})

describe('POST mfa/recovery-codes/regenerate', () => {
  test('ten new codes; the old ones, spent or not, stop working; audited', async () => {
    const { t, u, secret, codes } = await enrolled()
    await login(t.slug, { email: u.email, password: STRONG_PASSWORD, recoveryCode: codes[0] })
    const mark = await auditMark(server, t.tenantId)
    const res = await regenerate(t.slug, { totpCode: totpAt(server, secret) }, u.accessToken)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body), ['recoveryCodes'])
    const fresh = res.body.recoveryCodes as string[]
    assert.equal(fresh.length, 10)
    for (const code of fresh) assert.match(code, CODE)
    assert.equal(fresh.filter((c) => codes.includes(c)).length, 0)
    const rows = await codeRows(t.tenantId, u.id)
    assert.equal(rows.length, 10)
    assert.ok(rows.every((r) => r.usedAt === null))
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId, e.actorId, e.metadata]),
      [['MfaRecoveryCodesRegenerated', u.id, u.id, { count: 10 }]],
    )
    const old = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[1],
    })
    expectError(old, 401, 'invalid_mfa_code')
    const ok = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: fresh[0],
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test('the TOTP code that regenerated cannot be used again (its step is claimed)', async () => {
    const { t, u, secret } = await enrolled()
    const totpCode = totpAt(server, secret)
    const first = await regenerate(t.slug, { totpCode }, u.accessToken)
    assert.equal(first.status, 200)
    const again = await unchanged(server, t.tenantId, () =>
      regenerate(t.slug, { totpCode }, u.accessToken),
    )
    expectError(again, 401, 'invalid_mfa_code')
    expectError(
      await login(t.slug, { email: u.email, password: STRONG_PASSWORD, totpCode }),
      401,
      'invalid_mfa_code',
    )
  })

  test('without TOTP: 401 mfa_not_enrolled; a pending enrolment is not TOTP either', async () => {
    const t = await tenantWith(server, { mfaPolicy: 'Optional' })
    const u = await member(server, t.slug)
    const res = await unchanged(server, t.tenantId, () =>
      regenerate(t.slug, { totpCode: '123456' }, u.accessToken),
    )
    expectError(res, 401, 'mfa_not_enrolled')
    await server.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: u.accessToken,
    })
    expectError(
      await unchanged(server, t.tenantId, () =>
        regenerate(t.slug, { totpCode: '123456' }, u.accessToken),
      ),
      401,
      'mfa_not_enrolled',
    )
  })

  test('a wrong TOTP code: 401 invalid_mfa_code, the codes stay', async () => {
    const { t, u, secret } = await enrolled()
    const res = await unchanged(server, t.tenantId, () =>
      regenerate(t.slug, { totpCode: totpAt(server, secret, 5) }, u.accessToken),
    )
    expectError(res, 401, 'invalid_mfa_code')
  })

  test('wrong TOTP codes count against the account: past the budget, 429', async (ctx) => {
    const tight = await startTestServer(ctx, {
      limits: { ...GENEROUS_LIMITS, accountFailures: { points: 2, seconds: 3600 } },
    })
    const t = await tenantWith(tight, { mfaPolicy: 'Optional' })
    const u = await member(tight, t.slug)
    const { secret } = await enrolWithRecoveryCodes(tight, t.slug, u.accessToken)
    const send = (totpCode: string) =>
      tight.request(
        'POST',
        `/v1/${t.slug}/mfa/recovery-codes/regenerate`,
        { totpCode },
        { token: u.accessToken },
      )
    for (let i = 0; i < 2; i++) {
      expectError(await send(totpAt(tight, secret, 5)), 401, 'invalid_mfa_code')
    }
    expectError(await send(totpAt(tight, secret)), 429, 'rate_limited')
  })

  test('bad input: 400 validation, nothing changes', async () => {
    const { t, u } = await enrolled()
    for (const body of [
      {},
      { totpCode: 123456 },
      { totpCode: '12345' },
      { totpCode: '1234567' },
      { totpCode: ['123456'] },
      { totpCode: null },
      { totpCode: 'abcdef' },
    ]) {
      const res = await unchanged(server, t.tenantId, () => regenerate(t.slug, body, u.accessToken))
      expectValidation(res)
    }
    const raw = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/mfa/recovery-codes/regenerate`, undefined, {
        token: u.accessToken,
        raw: '{"totpCode":',
      }),
    )
    expectError(raw, 400, 'malformed_json')
  })

  test('needs a user token of this tenant: none, an API key, another tenant’s', async () => {
    const { t, u } = await enrolled()
    const other = await tenantWith(server, {})
    const key = await insertApiKey(server, t.tenantId)
    const body = { totpCode: '123456' }
    await unchanged(server, [t.tenantId, other.tenantId], async () => {
      expectError(await regenerate(t.slug, body), 401, 'token_missing')
      expectError(await regenerate(t.slug, body, key), 401, 'user_token_required')
      expectError(await regenerate(other.slug, body, u.accessToken), 401, 'token_invalid')
    })
  })
})

describe('an admin TOTP reset', () => {
  test('removes the recovery codes with the secret', async () => {
    const { t, u, codes } = await enrolled()
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/users/${u.id}/totp/disable`,
      undefined,
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal((await codeRows(t.tenantId, u.id)).length, 0)
    // Without TOTP nothing is asked under Optional, and a code proves nothing any more.
    const after = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[0],
    })
    assert.equal(after.status, 200)
    const reEnrolled = await enrolWithRecoveryCodes(server, t.slug, after.body.accessToken)
    const stale = await login(t.slug, {
      email: u.email,
      password: STRONG_PASSWORD,
      recoveryCode: codes[1],
    })
    expectError(stale, 401, 'invalid_mfa_code')
    assert.equal(reEnrolled.recoveryCodes.length, 10)
  })
})
