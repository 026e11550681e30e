import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { ConfigError, loadConfig } from '../src/config.ts'
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
