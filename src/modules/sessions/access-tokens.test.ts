// Access tokens are checked strictly (CONTRACT §4): HS256 only, our issuer, a known `kid`,
// a signature over exactly this header and payload, every claim present, not expired,
// this tenant's. Keys rotate through JWT_PREVIOUS_SECRETS.
import assert from 'node:assert/strict'
import { createHmac, createSign, generateKeyPairSync, randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import { tenantSnapshot } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  signup,
  startSecondInstance,
  startTestServer,
  TEST_JWT_SECRET,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { keyId } from '../../lib/jwt.ts'

const OLD_SECRET = 'an-older-signing-key-from-last-quarter-0001'
const UNLISTED_SECRET = 'a-signing-key-nobody-configured-here-00002'

let server: TestServer
let t: TenantFixture
let u: Awaited<ReturnType<typeof signup>>
before(async (ctx) => {
  server = await startTestServer(ctx, { jwtPreviousSecrets: [OLD_SECRET] })
  t = await createTenant(server)
  u = await signup(server, t.slug)
})

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))

interface ForgeOptions {
  secret?: string
  header?: Record<string, unknown>
  hmac?: 'sha256' | 'sha512'
}

/** A token signed the way the service signs, with any header, payload and key. */
function forge(payload: Record<string, unknown>, options: ForgeOptions = {}): string {
  const secret = options.secret ?? TEST_JWT_SECRET
  const header = options.header ?? { alg: 'HS256', typ: 'JWT', kid: keyId(secret) }
  const input = `${b64(header)}.${b64(payload)}`
  const signature = createHmac(options.hmac ?? 'sha256', secret)
    .update(input)
    .digest('base64url')
  return `${input}.${signature}`
}

/** The service's time in seconds: its clock stands still while the tests run. */
const serverNow = () => Math.floor(server.clock.now().getTime() / 1000)

/**
 * The claims of a live session of `u`, issued now by the service's clock. Not by the real
 * time: `iat` may lie at most 60 s ahead of the service's clock, so claims made with the real
 * time would be refused once the file had run a minute (a busy machine takes that long).
 */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const real = decode(u.accessToken.split('.')[1])
  const iat = serverNow()
  return { ...real, iat, exp: iat + 900, jti: randomUUID(), ...overrides }
}

const me = (token: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

describe('access tokens', () => {
  test('are HS256 JWTs with kid and exactly the claims of CONTRACT §4, plus the first-party aud', () => {
    const [header, payload] = u.accessToken
      .split('.')
      .map((p: string, i: number) => (i < 2 ? decode(p) : p))
    assert.deepEqual(header, { alg: 'HS256', typ: 'JWT', kid: keyId(TEST_JWT_SECRET) })
    assert.deepEqual(Object.keys(payload).sort(), [
      'aud',
      'exp',
      'iat',
      'iss',
      'jti',
      'role',
      'sid',
      'sub',
      'tid',
    ])
    assert.equal(payload.iss, 'http://auth.test')
    assert.equal(payload.aud, 'http://auth.test/v1')
    assert.equal(payload.sub, u.user.id)
    assert.equal(payload.tid, t.tenantId)
    assert.equal(payload.role, 'Member')
    assert.equal(payload.exp - payload.iat, 900)
    assert.equal(typeof payload.sid, 'string')
    assert.equal(typeof payload.jti, 'string')
    const again = decode(t.admin.accessToken.split('.')[1])
    assert.notEqual(again.jti, payload.jti, 'every token has its own jti')
  })

  test('a token forged with the real key and claims is accepted (the forger is sound)', async () => {
    assert.equal((await me(forge(claims()))).status, 200)
  })

  test('rule: a token claiming to live longer than 900 s is refused (CONTRACT §8)', async () => {
    const iat = serverNow()
    expectError(await me(forge(claims({ iat, exp: iat + 901 }))), 401, 'token_invalid')
    expectError(await me(forge(claims({ iat: iat - 3600, exp: iat + 600 }))), 401, 'token_invalid')
    expectError(await me(forge(claims({ iat, exp: iat + 86_400 * 365 }))), 401, 'token_invalid')
    assert.equal((await me(forge(claims({ iat, exp: iat + 900 })))).status, 200, 'the edge')
  })

  test('rule: a token issued more than 60 s in the future is refused (CONTRACT §8)', async () => {
    const now = serverNow()
    const early = (ahead: number) => forge(claims({ iat: now + ahead, exp: now + ahead + 900 }))
    expectError(await me(early(61)), 401, 'token_invalid')
    expectError(await me(early(3600)), 401, 'token_invalid')
    assert.equal((await me(early(60))).status, 200, 'within the allowed skew')
  })

  test('rule: alg none is refused', async () => {
    const header = { alg: 'none', typ: 'JWT', kid: keyId(TEST_JWT_SECRET) }
    const unsigned = `${b64(header)}.${b64(claims())}.`
    expectError(await me(unsigned), 401, 'token_invalid')
    expectError(await me(unsigned.slice(0, -1)), 401, 'token_invalid')
    const noneWithSig = forge(claims(), { header })
    expectError(await me(noneWithSig), 401, 'token_invalid')
  })

  test('rule: HS512 is refused, even signed with the right key', async () => {
    const header = { alg: 'HS512', typ: 'JWT', kid: keyId(TEST_JWT_SECRET) }
    expectError(await me(forge(claims(), { header, hmac: 'sha512' })), 401, 'token_invalid')
  })

  test('rule: RS256 is refused', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const header = { alg: 'RS256', typ: 'JWT', kid: keyId(TEST_JWT_SECRET) }
    const input = `${b64(header)}.${b64(claims())}`
    const signature = createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')
    expectError(await me(`${input}.${signature}`), 401, 'token_invalid')
    // RS256 in the header over an HMAC signature (algorithm confusion).
    expectError(await me(forge(claims(), { header })), 401, 'token_invalid')
  })

  test('rule: a tampered payload is refused', async () => {
    const [h, p, s] = u.accessToken.split('.')
    const payload = decode(p)
    for (const change of [
      { role: 'Admin' },
      { sub: t.admin.user.id },
      { exp: payload.exp + 3600 },
      { tid: randomUUID() },
    ]) {
      const tampered = `${h}.${b64({ ...payload, ...change })}.${s}`
      expectError(await me(tampered), 401, 'token_invalid')
    }
    // A flipped signature character, and a header swapped for another kid.
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.at(-1)}`
    expectError(await me(flipped), 401, 'token_invalid')
    const otherKid = b64({ alg: 'HS256', typ: 'JWT', kid: keyId(OLD_SECRET) })
    expectError(await me(`${otherKid}.${p}.${s}`), 401, 'token_invalid')
    assert.equal((await me(u.accessToken)).status, 200, 'the original still works')
  })

  test('rule: a wrong issuer is refused', async () => {
    for (const iss of ['http://evil.test', 'http://auth.test/', 'https://auth.test', '']) {
      expectError(await me(forge(claims({ iss }))), 401, 'token_invalid')
    }
  })

  test('rule: a missing or past exp is refused', async () => {
    const { exp: _exp, ...noExp } = claims()
    expectError(await me(forge(noExp)), 401, 'token_invalid')
    const past = Math.floor(Date.now() / 1000) - 5
    expectError(await me(forge(claims({ iat: past - 900, exp: past }))), 401, 'token_expired')
    expectError(await me(forge(claims({ exp: 'tomorrow' }))), 401, 'token_invalid')
  })

  test('rule: a token accepted before is refused once it has expired (the check is made again)', async (ctx) => {
    const token = forge(claims())
    assert.equal((await me(token)).status, 200, 'accepted, and so remembered')
    const exp = decode(token.split('.')[1]).exp as number
    ctx.mock.timers.enable({ apis: ['Date'], now: exp * 1000 + 1 })
    try {
      expectError(await me(token), 401, 'token_expired')
    } finally {
      ctx.mock.timers.reset()
    }
  })

  test('rule: a token missing any claim is refused', async () => {
    for (const name of ['iss', 'sub', 'tid', 'role', 'sid', 'iat', 'jti']) {
      const { [name]: _dropped, ...rest } = claims()
      expectError(await me(forge(rest)), 401, 'token_invalid')
    }
  })

  test('rule: a missing, unknown or unlisted kid is refused', async () => {
    const noKid = forge(claims(), { header: { alg: 'HS256', typ: 'JWT' } })
    expectError(await me(noKid), 401, 'token_invalid')
    const unknownKid = forge(claims(), { header: { alg: 'HS256', typ: 'JWT', kid: 'nope' } })
    expectError(await me(unknownKid), 401, 'token_invalid')
    expectError(await me(forge(claims(), { secret: UNLISTED_SECRET })), 401, 'token_invalid')
  })

  test("rule: a token of another tenant is refused on this tenant's routes", async () => {
    const other = await createTenant(server)
    const stranger = await signup(server, other.slug)
    expectError(await me(stranger.accessToken), 401, 'token_invalid')
    expectError(await me(other.admin.accessToken), 401, 'token_invalid')
    // Properly signed, but naming the other tenant while used here.
    const cross = forge({
      ...decode(stranger.accessToken.split('.')[1]),
      jti: randomUUID(),
    })
    expectError(await me(cross), 401, 'token_invalid')
    assert.equal((await me(stranger.accessToken, other.slug)).status, 200)
    // A token naming this tenant but a user of the other one finds nobody.
    const mixed = forge(claims({ sub: stranger.user.id }))
    const res = await me(mixed)
    assert.equal(res.status, 401)
  })

  test('rule: a forged token for a revoked session is refused', async () => {
    const v = await signup(server, t.slug)
    const out = await server.request('POST', `/v1/${t.slug}/auth/logout`, {
      refreshToken: v.refreshToken,
    })
    assert.equal(out.status, 200)
    const fresh = forge({ ...decode(v.accessToken.split('.')[1]), jti: randomUUID() })
    expectError(await me(fresh), 401, 'session_revoked')
  })

  test('garbage in the Authorization header is 401', async () => {
    for (const token of ['', 'abc', 'a.b.c', '...', 'eyJhbGciOiJIUzI1NiJ9', `${u.accessToken}x`]) {
      const res = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
        headers: { authorization: `Bearer ${token}` },
      })
      assert.equal(res.status, 401, token)
      assert.equal(res.body.code, 'UNAUTHORIZED')
    }
    for (const header of [u.accessToken, `Token ${u.accessToken}`, `Bearer  ${u.accessToken} x`]) {
      const res = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
        headers: { authorization: header },
      })
      expectError(res, 401, 'token_invalid')
    }
    expectError(await server.request('GET', `/v1/${t.slug}/me`), 401, 'token_missing')
  })

  test('refused tokens change nothing on any bearer route', async () => {
    const victim = await signup(server, t.slug)
    const [h, p, s] = victim.accessToken.split('.')
    const bad = [
      `${h}.${b64({ ...decode(p), role: 'Admin' })}.${s}`,
      forge(claims({ sub: victim.user.id, sid: decode(p).sid, iss: 'http://evil.test' })),
      forge(claims({ sub: victim.user.id, sid: decode(p).sid }), { secret: UNLISTED_SECRET }),
    ]
    const before = await tenantSnapshot(server, t.tenantId)
    for (const token of bad) {
      for (const [method, path, body] of [
        ['GET', '/me', undefined],
        ['DELETE', '/me', undefined],
        [
          'PATCH',
          '/me/password',
          { currentPassword: victim.password, newPassword: 'fresh-secret-99x' },
        ],
        ['POST', '/auth/logout-all', undefined],
      ] as const) {
        const res = await server.request(method, `/v1/${t.slug}${path}`, body, { token })
        expectError(res, 401, 'token_invalid')
      }
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('key rotation through JWT_PREVIOUS_SECRETS', () => {
  test('rule: a token signed with a listed previous key still verifies', async () => {
    const old = forge(claims(), { secret: OLD_SECRET })
    assert.equal(decode(old.split('.')[0]).kid, keyId(OLD_SECRET))
    const res = await me(old)
    assert.equal(res.status, 200)
    assert.equal(res.body.id, u.user.id)
  })

  test('rule: new tokens are signed with the current key, never a previous one', () => {
    assert.equal(decode(u.accessToken.split('.')[0]).kid, keyId(TEST_JWT_SECRET))
  })

  test('rule: a token signed with a previous key is refused once that key is dropped', async () => {
    const second = await startSecondInstance(server, { jwtPreviousSecrets: [] })
    try {
      const old = forge(claims(), { secret: OLD_SECRET })
      const res = await second.request('GET', `/v1/${t.slug}/me`, undefined, { token: old })
      expectError(res, 401, 'token_invalid')
      const current = await second.request('GET', `/v1/${t.slug}/me`, undefined, {
        token: u.accessToken,
      })
      assert.equal(current.status, 200, 'current-key tokens keep working')
    } finally {
      await second.close()
    }
  })

  test('rule: after a rotation, tokens of the old key verify and new ones use the new key', async () => {
    // The key that signs today becomes "previous" on an instance with a new key.
    const NEW_SECRET = 'the-next-signing-key-rolled-out-today-0003'
    const rotated = await startSecondInstance(server, {
      jwtSecret: NEW_SECRET,
      jwtPreviousSecrets: [TEST_JWT_SECRET],
    })
    try {
      const before = await rotated.request('GET', `/v1/${t.slug}/me`, undefined, {
        token: u.accessToken,
      })
      assert.equal(before.status, 200, 'a token of the previous key verifies')
      const login = await rotated.request('POST', `/v1/${t.slug}/auth/login`, {
        email: u.email,
        password: u.password,
      })
      assert.equal(login.status, 200)
      assert.equal(decode(login.body.accessToken.split('.')[0]).kid, keyId(NEW_SECRET))
      // The instance still on the old key does not know the new one.
      expectError(await me(login.body.accessToken), 401, 'token_invalid')
    } finally {
      await rotated.close()
    }
  })
})
