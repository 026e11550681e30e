import assert from 'node:assert/strict'
import { createPrivateKey, createPublicKey, randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.ts'
import { privateKeyPem } from './fixtures/signing-keys.ts'
import { tempDir } from './helpers.ts'

const tmp = () => tempDir('auth-config-')
const key = (v: string) => `${v}:${randomBytes(32).toString('base64')}`

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (error) {
    assert.ok(error instanceof ConfigError)
    return error.problems
  }
  return []
}

test('defaults follow CONTRACT §1', () => {
  const config = loadConfig({ DATA_DIR: tmp() })
  assert.equal(config.port, 3000)
  assert.equal(config.host, '127.0.0.1')
  assert.equal(config.publicUrl, 'http://localhost:3000')
  assert.equal(config.databaseUrl, undefined)
  assert.equal(config.redisUrl, undefined)
  assert.equal(config.trustProxy, false)
  assert.equal(config.tenantCreationToken, undefined)
  assert.equal(config.idp, undefined)
  assert.equal(config.limits.loginFailures.points, 10)
  assert.equal(config.limits.codeRequestsPerEmail.points, 3)
  assert.equal(config.limits.codeRequestsPerEmail.seconds, 900)
})

test('dev secrets are generated once and kept in DATA_DIR', () => {
  const dir = tmp()
  const first = loadConfig({ DATA_DIR: dir })
  const file = join(dir, 'dev-secrets.json')
  assert.equal(statSync(file).mode & 0o777, 0o600)
  assert.ok(Buffer.byteLength(first.jwtSecret) >= 32)
  assert.equal(first.encryptionKeys[0].key.length, 32)
  const again = loadConfig({ DATA_DIR: dir })
  assert.equal(again.jwtSecret, first.jwtSecret)
  assert.deepEqual(again.encryptionKeys[0].key, first.encryptionKeys[0].key)
  assert.match(readFileSync(file, 'utf8'), /jwtSecret/)
})

test('production refuses to start without JWT_SECRET, ENCRYPTION_KEYS and SMTP_URL', () => {
  const found = problems({ NODE_ENV: 'production', DATA_DIR: tmp() })
  assert.deepEqual(found, [
    'JWT_SECRET: required when NODE_ENV=production',
    'ENCRYPTION_KEYS: required when NODE_ENV=production',
    'SMTP_URL: required when NODE_ENV=production',
  ])
})

test('production starts with its secrets given', () => {
  const config = loadConfig({
    NODE_ENV: 'production',
    JWT_SECRET: 'p'.repeat(40),
    ENCRYPTION_KEYS: `${key('v2')},${key('v1')}`,
    SMTP_URL: 'smtp://mail.example.com:587',
  })
  assert.equal(config.production, true)
  assert.deepEqual(
    config.encryptionKeys.map((k) => k.version),
    ['v2', 'v1'],
  )
})

test('each mistake gets one line naming its variable', () => {
  const found = problems({
    DATA_DIR: tmp(),
    PORT: 'eighty',
    DATABASE_URL: 'mysql://x',
    REDIS_URL: 'http://x',
    JWT_SECRET: 'short',
    JWT_PREVIOUS_SECRETS: 'also-short',
    ENCRYPTION_KEYS: 'v1:notbase64!',
    SMTP_URL: 'mail.example.com',
    TRUST_PROXY: 'yes',
    IDP_AUTHORIZATION_URL: 'https://idp.example.com/authorize',
    RATE_LIMIT_LOGIN_FAILURES: 'ten',
    PUBLIC_URL: 'ftp://x',
  })
  const names = found.map((line) => line.split(':')[0])
  assert.deepEqual(names.sort(), [
    'DATABASE_URL',
    'ENCRYPTION_KEYS',
    'IDP_ISSUER',
    'JWT_PREVIOUS_SECRETS',
    'JWT_SECRET',
    'PORT',
    'PUBLIC_URL',
    'RATE_LIMIT_LOGIN_FAILURES',
    'REDIS_URL',
    'SMTP_URL',
    'TRUST_PROXY',
  ])
})

test('encryption keys must be 32 bytes with distinct versions', () => {
  assert.match(
    problems({ DATA_DIR: tmp(), ENCRYPTION_KEYS: `v1:${Buffer.alloc(16).toString('base64')}` })[0],
    /^ENCRYPTION_KEYS:/,
  )
  assert.match(
    problems({ DATA_DIR: tmp(), ENCRYPTION_KEYS: `${key('v1')},${key('v1')}` })[0],
    /appears twice/,
  )
})

test('rate limits are configurable as POINTS/SECONDS', () => {
  const config = loadConfig({ DATA_DIR: tmp(), RATE_LIMIT_SIGNUP: '5/60' })
  assert.deepEqual(config.limits.signup, { points: 5, seconds: 60 })
})

test('an identity provider by issuer or by three explicit endpoints', () => {
  const byIssuer = loadConfig({ DATA_DIR: tmp(), IDP_ISSUER: 'https://idp.example.com' })
  assert.equal(byIssuer.idp?.issuer, 'https://idp.example.com')
  assert.equal(byIssuer.idp?.scopes, 'openid email profile')
  const explicit = loadConfig({
    DATA_DIR: tmp(),
    IDP_AUTHORIZATION_URL: 'https://idp.example.com/a',
    IDP_TOKEN_URL: 'https://idp.example.com/t',
    IDP_USERINFO_URL: 'https://idp.example.com/u',
  })
  assert.equal(explicit.idp?.issuer, undefined)
  assert.equal(explicit.idp?.tokenUrl, 'https://idp.example.com/t')
})

test('TRUST_PROXY: off, one hop, a hop count or a list of proxy addresses', () => {
  const dir = tmp()
  assert.equal(loadConfig({ DATA_DIR: dir }).trustProxy, false)
  assert.equal(loadConfig({ DATA_DIR: dir, TRUST_PROXY: 'true' }).trustProxy, true)
  assert.equal(loadConfig({ DATA_DIR: dir, TRUST_PROXY: '2' }).trustProxy, 2)
  assert.equal(
    loadConfig({ DATA_DIR: dir, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy,
    '10.0.0.0/8,127.0.0.1',
  )
})

// Public-key access tokens (CONTRACT §10): JWT_ALG and JWT_PRIVATE_KEYS.
const pem = (alg: Parameters<typeof privateKeyPem>[0]) => privateKeyPem(alg)

test('JWT_ALG: HS256 by default; ES256 and EdDSA keep a generated dev key in DATA_DIR', () => {
  const dir = tmp()
  const plain = loadConfig({ DATA_DIR: dir })
  assert.equal(plain.jwtAlg, 'HS256')
  assert.deepEqual(plain.jwtPrivateKeys, [])
  for (const [alg, type] of [
    ['ES256', 'ec'],
    ['EdDSA', 'ed25519'],
  ] as const) {
    const first = loadConfig({ DATA_DIR: dir, JWT_ALG: alg })
    assert.equal(first.jwtAlg, alg)
    assert.equal(first.jwtPrivateKeys.length, 1)
    assert.equal(createPrivateKey(first.jwtPrivateKeys[0]).asymmetricKeyType, type)
    const file = join(dir, `dev-jwt-${alg.toLowerCase()}.pem`)
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.deepEqual(
      loadConfig({ DATA_DIR: dir, JWT_ALG: alg }).jwtPrivateKeys,
      first.jwtPrivateKeys,
    )
  }
})

test('JWT_PRIVATE_KEYS: concatenated PEM blocks, newest first, also with \\n escapes', () => {
  const [newer, older] = [pem('ES256'), pem('ES256')]
  const config = loadConfig({ DATA_DIR: tmp(), JWT_ALG: 'ES256', JWT_PRIVATE_KEYS: newer + older })
  assert.deepEqual(config.jwtPrivateKeys, [newer, older])
  const escaped = `${newer}\n${older}`.replace(/\n/g, '\\n')
  const again = loadConfig({ DATA_DIR: tmp(), JWT_ALG: 'ES256', JWT_PRIVATE_KEYS: escaped })
  assert.deepEqual(again.jwtPrivateKeys, [newer, older])
  // A SEC1 key as `openssl ecparam -genkey` writes it, parameters block included.
  const sec1 = createPrivateKey(newer).export({ type: 'sec1', format: 'pem' }).toString()
  const params = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n'
  const openssl = loadConfig({ DATA_DIR: tmp(), JWT_ALG: 'ES256', JWT_PRIVATE_KEYS: params + sec1 })
  assert.deepEqual(openssl.jwtPrivateKeys, [newer])
  const ed = pem('EdDSA')
  assert.deepEqual(
    loadConfig({ DATA_DIR: tmp(), JWT_ALG: 'EdDSA', JWT_PRIVATE_KEYS: ed }).jwtPrivateKeys,
    [ed],
  )
})

// CONTRACT §1 requires JWT_SECRET in production whatever the algorithm (an earlier version
// of this test let ES256/EdDSA start without it, against the CONTRACT).
test('production with ES256 or EdDSA needs JWT_PRIVATE_KEYS as well as JWT_SECRET', () => {
  const rest = {
    NODE_ENV: 'production',
    ENCRYPTION_KEYS: key('v1'),
    SMTP_URL: 'smtp://mail.example.com:587',
  }
  for (const alg of ['ES256', 'EdDSA'] as const) {
    assert.deepEqual(problems({ ...rest, DATA_DIR: tmp(), JWT_ALG: alg }), [
      'JWT_SECRET: required when NODE_ENV=production',
      'JWT_PRIVATE_KEYS: required when NODE_ENV=production',
    ])
    assert.deepEqual(
      problems({ ...rest, DATA_DIR: tmp(), JWT_ALG: alg, JWT_PRIVATE_KEYS: pem(alg) }),
      ['JWT_SECRET: required when NODE_ENV=production'],
    )
    const secret = { JWT_SECRET: 'p'.repeat(40) }
    const config = loadConfig({ ...rest, ...secret, JWT_ALG: alg, JWT_PRIVATE_KEYS: pem(alg) })
    assert.equal(config.jwtAlg, alg)
  }
  // Nothing was generated: production never writes keys of its own.
  const dir = tmp()
  problems({ ...rest, DATA_DIR: dir, JWT_ALG: 'ES256' })
  assert.throws(() => statSync(join(dir, 'dev-jwt-es256.pem')))
})

test('JWT_ALG and JWT_PRIVATE_KEYS mistakes get one line naming the variable', () => {
  const dir = tmp()
  for (const alg of ['RS256', 'es256', 'none', 'HS512']) {
    assert.deepEqual(problems({ DATA_DIR: dir, JWT_ALG: alg }), [
      'JWT_ALG: must be one of HS256, ES256, EdDSA',
    ])
  }
  const publicPem = createPublicKey(pem('ES256')).export({ type: 'spki', format: 'pem' })
  const garbled = pem('ES256').replace(/\n[A-Za-z0-9+/]{10}/, '\n!!!!!!!!!!')
  const cases: [string, string, RegExp][] = [
    ['ES256', 'not a pem', /expected PEM private keys/],
    ['ES256', `${pem('ES256')}trailing text`, /expected PEM private keys/],
    ['ES256', garbled, /key 1 is not an unencrypted PEM private key/],
    ['ES256', publicPem.toString(), /key 1 is not an unencrypted PEM private key/],
    ['ES256', pem('EdDSA'), /key 1: ES256 needs an EC key on the P-256 curve/],
    ['ES256', pem('ES256') + pem('P-384'), /key 2: ES256 needs an EC key on the P-256 curve/],
    ['ES256', pem('RSA'), /key 1: ES256 needs/],
    ['EdDSA', pem('ES256'), /key 1: EdDSA needs an Ed25519 key/],
    ['EdDSA', pem('RSA'), /key 1: EdDSA needs an Ed25519 key/],
  ]
  const twice = pem('EdDSA')
  cases.push(['EdDSA', twice + twice, /key 2 appears twice/])
  for (const [alg, raw, expected] of cases) {
    const found = problems({ DATA_DIR: dir, JWT_ALG: alg, JWT_PRIVATE_KEYS: raw })
    assert.equal(found.length, 1, JSON.stringify(found))
    assert.match(found[0], /^JWT_PRIVATE_KEYS: /)
    assert.match(found[0], expected)
  }
  assert.deepEqual(problems({ DATA_DIR: dir, JWT_PRIVATE_KEYS: pem('ES256') }), [
    'JWT_PRIVATE_KEYS: only used with JWT_ALG=ES256 or EdDSA',
  ])
})

test('HASH_CONCURRENCY and HASH_QUEUE_LIMIT: whole numbers, at least one hash in flight', () => {
  const dir = tempDir('cfg-')
  assert.deepEqual(problems({ DATA_DIR: dir, HASH_CONCURRENCY: '0' }), [
    'HASH_CONCURRENCY: must be at least 1',
  ])
  assert.deepEqual(problems({ DATA_DIR: dir, HASH_CONCURRENCY: 'four' }), [
    'HASH_CONCURRENCY: must be a non-negative integer',
  ])
  assert.deepEqual(problems({ DATA_DIR: dir, HASH_QUEUE_LIMIT: '-1' }), [
    'HASH_QUEUE_LIMIT: must be a non-negative integer',
  ])
  const set = loadConfig({ DATA_DIR: dir, HASH_CONCURRENCY: '3', HASH_QUEUE_LIMIT: '0' })
  assert.equal(set.hashConcurrency, 3)
  assert.equal(set.hashQueueLimit, 0)
  const defaults = loadConfig({ DATA_DIR: dir, UV_THREADPOOL_SIZE: '2' })
  assert.equal(defaults.hashConcurrency, 2, 'never more hashes than the thread pool')
  assert.equal(defaults.hashQueueLimit, 32)
})

// The OpenID provider's keys (CONTRACT §11): OIDC_SIGNING_KEYS.
test('OIDC_SIGNING_KEYS: RSA and EC P-256 PEM keys, newest first; dev keys generated once in DATA_DIR', () => {
  const dir = tmp()
  const dev = loadConfig({ DATA_DIR: dir })
  assert.deepEqual(
    dev.oidcSigningKeys.map((pem) => createPrivateKey(pem).asymmetricKeyType),
    ['rsa', 'ec'],
  )
  assert.deepEqual(loadConfig({ DATA_DIR: dir }).oidcSigningKeys, dev.oidcSigningKeys)
  const given = loadConfig({ DATA_DIR: tmp(), OIDC_SIGNING_KEYS: dev.oidcSigningKeys.join('') })
  assert.deepEqual(given.oidcSigningKeys, dev.oidcSigningKeys)
})

test('OIDC_SIGNING_KEYS mistakes: one line naming the variable', () => {
  const ec = privateKeyPem('ES256')
  for (const [raw, expected] of [
    ['not a key', /OIDC_SIGNING_KEYS: expected PEM private keys/],
    [ec, /OIDC_SIGNING_KEYS: at least one RSA key is required/],
    [privateKeyPem('EdDSA'), /OIDC_SIGNING_KEYS: key 1: expected an RSA key/],
  ] as const) {
    const found = problems({ DATA_DIR: tmp(), OIDC_SIGNING_KEYS: raw })
    assert.equal(found.length, 1, JSON.stringify(found))
    assert.match(found[0], expected)
  }
})

test('production without OIDC_SIGNING_KEYS starts with the OpenID provider off', () => {
  const config = loadConfig({
    NODE_ENV: 'production',
    JWT_SECRET: 'p'.repeat(40),
    ENCRYPTION_KEYS: key('v1'),
    SMTP_URL: 'smtp://mail.example.com:587',
  })
  assert.deepEqual(config.oidcSigningKeys, [])
})

test('OIDC_BACKCHANNEL_ALLOW_LOOPBACK is off by default, on only outside production, and only true or false', () => {
  assert.equal(loadConfig({ DATA_DIR: tmp() }).oidcBackchannelAllowLoopback, false)
  const on = loadConfig({ DATA_DIR: tmp(), OIDC_BACKCHANNEL_ALLOW_LOOPBACK: 'true' })
  assert.equal(on.oidcBackchannelAllowLoopback, true)
  assert.deepEqual(problems({ DATA_DIR: tmp(), OIDC_BACKCHANNEL_ALLOW_LOOPBACK: 'yes' }), [
    'OIDC_BACKCHANNEL_ALLOW_LOOPBACK: must be true or false',
  ])
  const inProduction = problems({
    NODE_ENV: 'production',
    JWT_SECRET: 'p'.repeat(40),
    ENCRYPTION_KEYS: key('v1'),
    SMTP_URL: 'smtp://mail.example.com:587',
    OIDC_BACKCHANNEL_ALLOW_LOOPBACK: 'true',
  })
  assert.deepEqual(inProduction, [
    'OIDC_BACKCHANNEL_ALLOW_LOOPBACK: development and tests only, not with NODE_ENV=production',
  ])
})

test('SOCIAL_PROVIDER_ENDPOINTS replaces presets’ endpoints outside production only, and must be an object of URLs', () => {
  assert.deepEqual(loadConfig({ DATA_DIR: tmp() }).socialProviderEndpoints, {})
  const value =
    '{"google": {"issuer": "http://127.0.0.1:4010"}, "github": {"apiUrl": "http://127.0.0.1:4011/api"}}'
  assert.deepEqual(
    loadConfig({ DATA_DIR: tmp(), SOCIAL_PROVIDER_ENDPOINTS: value }).socialProviderEndpoints,
    {
      google: { issuer: 'http://127.0.0.1:4010' },
      github: { apiUrl: 'http://127.0.0.1:4011/api' },
    },
  )
  for (const bad of [
    'not json',
    '[]',
    '{"google": "x"}',
    '{"google": {"issuer": "ftp://x"}}',
    '{"google": {"issuer": 4}}',
  ]) {
    const found = problems({ DATA_DIR: tmp(), SOCIAL_PROVIDER_ENDPOINTS: bad })
    assert.equal(found.length, 1, bad)
    assert.match(found[0], /^SOCIAL_PROVIDER_ENDPOINTS: /, bad)
  }
  const inProduction = problems({
    NODE_ENV: 'production',
    JWT_SECRET: 'p'.repeat(40),
    ENCRYPTION_KEYS: key('v1'),
    SMTP_URL: 'smtp://mail.example.com:587',
    SOCIAL_PROVIDER_ENDPOINTS: value,
  })
  assert.deepEqual(inProduction, [
    'SOCIAL_PROVIDER_ENDPOINTS: development and tests only, not with NODE_ENV=production',
  ])
})

test('DATABASE_POOL_MODE is session by default, transaction on demand, nothing else', () => {
  assert.equal(loadConfig({ DATA_DIR: tmp() }).databasePoolMode, 'session')
  const config = loadConfig({ DATA_DIR: tmp(), DATABASE_POOL_MODE: 'transaction' })
  assert.equal(config.databasePoolMode, 'transaction')
  assert.deepEqual(problems({ DATA_DIR: tmp(), DATABASE_POOL_MODE: 'statement' }), [
    'DATABASE_POOL_MODE: must be session or transaction',
  ])
})

test('REDIS_SENTINELS with REDIS_SENTINEL_MASTER find Redis through Sentinel (CONTRACT §15)', () => {
  const config = loadConfig({
    DATA_DIR: tmp(),
    REDIS_SENTINELS: '10.0.0.1:26379, sentinel-b:26380,[::1]:26381',
    REDIS_SENTINEL_MASTER: 'auth',
  })
  assert.deepEqual(config.redisSentinels, [
    { host: '10.0.0.1', port: 26379 },
    { host: 'sentinel-b', port: 26380 },
    { host: '::1', port: 26381 },
  ])
  assert.equal(config.redisSentinelMaster, 'auth')
  assert.equal(config.redisUrl, undefined)
  assert.deepEqual(loadConfig({ DATA_DIR: tmp() }).redisSentinels, [])
})

test('Sentinel settings that cannot work stop the start, one line each', () => {
  const dir = tmp()
  assert.deepEqual(problems({ DATA_DIR: dir, REDIS_SENTINELS: '10.0.0.1' }), [
    'REDIS_SENTINELS: expected host:port, comma separated',
  ])
  assert.deepEqual(problems({ DATA_DIR: dir, REDIS_SENTINELS: '10.0.0.1:26379' }), [
    'REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the monitored name)',
  ])
  assert.deepEqual(problems({ DATA_DIR: dir, REDIS_SENTINEL_MASTER: 'auth' }), [
    'REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER (host:port,…)',
  ])
  assert.deepEqual(
    problems({
      DATA_DIR: dir,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_SENTINELS: '10.0.0.1:26379',
      REDIS_SENTINEL_MASTER: 'auth',
    }),
    ['REDIS_URL: leave it unset when REDIS_SENTINELS is set'],
  )
  assert.deepEqual(
    problems({ DATA_DIR: dir, REDIS_SENTINELS: 'a:70000', REDIS_SENTINEL_MASTER: 'x' }),
    ['REDIS_SENTINELS: expected host:port, comma separated'],
  )
})

test('DATABASE_READ_URL: a PostgreSQL replica beside a PostgreSQL primary; the lag budget 1000 ms', () => {
  const dir = tmp()
  const none = loadConfig({ DATA_DIR: dir })
  assert.equal(none.databaseReadUrl, undefined)
  assert.equal(none.databaseReadMaxLagMs, 1000)
  const config = loadConfig({
    DATA_DIR: dir,
    DATABASE_URL: 'postgres://db-primary/auth',
    DATABASE_READ_URL: 'postgres://db-replica/auth',
    DATABASE_READ_MAX_LAG_MS: '250',
  })
  assert.equal(config.databaseReadUrl, 'postgres://db-replica/auth')
  assert.equal(config.databaseReadMaxLagMs, 250)
  assert.deepEqual(problems({ DATA_DIR: dir, DATABASE_READ_URL: 'postgres://db-replica/auth' }), [
    'DATABASE_READ_URL: needs a PostgreSQL DATABASE_URL (the primary)',
  ])
  assert.deepEqual(
    problems({
      DATA_DIR: dir,
      DATABASE_URL: 'postgres://db-primary/auth',
      DATABASE_READ_URL: 'mysql://db-replica/auth',
      DATABASE_READ_MAX_LAG_MS: 'soon',
    }),
    [
      'DATABASE_READ_URL: must start with postgres:// or postgresql://',
      'DATABASE_READ_MAX_LAG_MS: must be a non-negative integer',
    ],
  )
})
