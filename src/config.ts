// The service's configuration: every variable of CONTRACT §1, parsed once at start.
// Nothing below src/ reads process.env; buildApp() receives a Config.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import {
  type AsymmetricAlgorithm,
  JWT_ALGORITHMS,
  type JwtAlgorithm,
  parsePrivateKeys,
} from './lib/jwt.ts'
import { DEFAULT_LIMITS, type Limits, parseLimit } from './lib/limits.ts'
import { loadDevOidcKeys, parseOidcSigningKeys } from './lib/oidc-keys.ts'
import { defaultHashConcurrency } from './lib/passwords.ts'
import { loadDevKeys } from './lib/pem-keys.ts'

export interface EncryptionKey {
  version: string
  key: Buffer
}

export interface Config {
  port: number
  host: string
  publicUrl: string
  /** `postgres://…`, `memory://`, or undefined for PGlite in `dataDir`. */
  databaseUrl: string | undefined
  dataDir: string
  /**
   * DATABASE_READ_URL: a streaming replica of DATABASE_URL for the reads that may be served
   * from it (CONTRACT §15, db/replica.ts). Unset: every read goes to the primary.
   */
  databaseReadUrl: string | undefined
  /** DATABASE_READ_MAX_LAG_MS: a replica further behind than this serves no read. */
  databaseReadMaxLagMs: number
  redisUrl: string | undefined
  jwtSecret: string
  jwtPreviousSecrets: string[]
  /** The access-token algorithm (CONTRACT §10): HS256 uses the secrets, the others the keys. */
  jwtAlg: JwtAlgorithm
  /** PKCS#8 PEM private keys, newest first (the first signs); empty with HS256. */
  jwtPrivateKeys: string[]
  encryptionKeys: EncryptionKey[]
  /**
   * OIDC_SIGNING_KEYS (CONTRACT §11): PKCS#8 PEM keys of the OpenID provider, newest first.
   * Empty in production when the variable is unset: the provider is then off (404).
   */
  oidcSigningKeys: string[]
  /**
   * OIDC_BACKCHANNEL_ALLOW_LOOPBACK=true, development and tests only (refused with
   * NODE_ENV=production): an application's back-channel logout URI may be http(s) on
   * localhost, 127.0.0.1 or [::1], and the provider delivers logout tokens there. Private and
   * link-local addresses stay refused.
   */
  oidcBackchannelAllowLoopback: boolean
  /**
   * WEBHOOK_ALLOW_PRIVATE=true (CONTRACT §13): outbound calls to tenant-configured URLs may
   * reach loopback, private, link-local and unspecified addresses, and webhook URLs may be
   * http. Default false.
   */
  webhookAllowPrivate: boolean
  /** WEBHOOK_RETRY_SCHEDULE: seconds before each retry of a failed webhook delivery. */
  webhookRetrySchedule: number[]
  /**
   * WEBHOOK_WORKER=false: this instance never delivers webhooks (default true). Another
   * instance on the same database must, or deliveries wait in the outbox.
   */
  webhookWorker: boolean
  smtpUrl: string | undefined
  mailFrom: string
  idp: IdpConfig | undefined
  /**
   * false: the socket address is the client. true or a number: that many proxies in front
   * append to X-Forwarded-For, and the client is the entry they saw (never the left-most,
   * which the client writes). A string: the addresses or CIDRs of trusted proxies.
   */
  trustProxy: boolean | number | string
  tenantCreationToken: string | undefined
  /** When set, GET /metrics serves Prometheus text to `Bearer <it>` (CONTRACT §10). */
  metricsToken: string | undefined
  production: boolean
  logLevel: string
  limits: Limits
  /** Days a soft-deleted user is kept before the purge removes it. */
  userRetentionDays: number
  /** How often the revocation feed is read from the database (ms). */
  revocationPollMs: number
  /** Password hashes in flight at once, and how many more may wait (then 503). */
  hashConcurrency: number
  hashQueueLimit: number
}

export interface IdpConfig {
  issuer: string | undefined
  authorizationUrl: string | undefined
  tokenUrl: string | undefined
  userinfoUrl: string | undefined
  scopes: string
}

export class ConfigError extends Error {
  readonly problems: string[]
  constructor(problems: string[]) {
    super(problems.join('\n'))
    this.problems = problems
  }
}

type Env = Record<string, string | undefined>

/** Reads and checks the environment; throws a ConfigError listing one line per mistake. */
export function loadConfig(env: Env = process.env): Config {
  const problems: string[] = []
  const production = env.NODE_ENV === 'production'
  const port = parsePort(env.PORT, problems)
  const dataDir = resolve(env.DATA_DIR || './data')
  const databaseUrl = emptyToUndefined(env.DATABASE_URL)
  if (databaseUrl && !/^(postgres|postgresql|memory):\/\//.test(databaseUrl)) {
    problems.push('DATABASE_URL: must start with postgres://, postgresql:// or memory://')
  }
  const databaseReadUrl = emptyToUndefined(env.DATABASE_READ_URL)
  if (databaseReadUrl && !/^postgres(ql)?:\/\//.test(databaseReadUrl)) {
    problems.push('DATABASE_READ_URL: must start with postgres:// or postgresql://')
  }
  if (databaseReadUrl && !databaseUrl?.startsWith('postgres')) {
    problems.push('DATABASE_READ_URL: needs DATABASE_URL on PostgreSQL (the replica of it)')
  }
  const databaseReadMaxLagMs = parseIntVar(
    'DATABASE_READ_MAX_LAG_MS',
    env.DATABASE_READ_MAX_LAG_MS,
    1000,
    problems,
  )
  const redisUrl = emptyToUndefined(env.REDIS_URL)
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL: must start with redis:// or rediss://')
  }
  const publicUrl = (env.PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '')
  if (!isHttpUrl(publicUrl)) problems.push('PUBLIC_URL: must be an http(s) URL')

  const jwtAlg = parseJwtAlg(env.JWT_ALG, problems)
  // CONTRACT §1: production always needs JWT_SECRET; with a public-key algorithm the
  // private keys are due as well (they sign; the secret then signs nothing).
  const required = [
    'JWT_SECRET',
    ...(jwtAlg === 'HS256' ? [] : ['JWT_PRIVATE_KEYS']),
    'ENCRYPTION_KEYS',
    'SMTP_URL',
  ]
  if (production) {
    for (const name of required) {
      if (!env[name]) problems.push(`${name}: required when NODE_ENV=production`)
    }
  }
  const devSecrets = production ? undefined : () => loadDevSecrets(dataDir)
  const jwtSecret = env.JWT_SECRET || devSecrets?.().jwtSecret || ''
  if (Buffer.byteLength(jwtSecret, 'utf8') < 32 && (env.JWT_SECRET || !production)) {
    problems.push('JWT_SECRET: must be at least 32 bytes')
  }
  const jwtPreviousSecrets = splitList(env.JWT_PREVIOUS_SECRETS)
  for (const s of jwtPreviousSecrets) {
    if (Buffer.byteLength(s, 'utf8') < 32) {
      problems.push('JWT_PREVIOUS_SECRETS: every key must be at least 32 bytes')
      break
    }
  }
  const jwtPrivateKeys = parseJwtPrivateKeys(
    env.JWT_PRIVATE_KEYS,
    jwtAlg,
    dataDir,
    production,
    problems,
  )
  const encryptionKeys = parseEncryptionKeys(
    env.ENCRYPTION_KEYS || devSecrets?.().encryptionKeys || '',
    problems,
    production && !env.ENCRYPTION_KEYS,
  )
  const oidcSigningKeys = parseOidcKeys(env.OIDC_SIGNING_KEYS, dataDir, production, problems)
  const allowLoopback = env.OIDC_BACKCHANNEL_ALLOW_LOOPBACK
  if (
    allowLoopback !== undefined &&
    allowLoopback !== '' &&
    !/^(true|false)$/.test(allowLoopback)
  ) {
    problems.push('OIDC_BACKCHANNEL_ALLOW_LOOPBACK: must be true or false')
  }
  const oidcBackchannelAllowLoopback = allowLoopback === 'true'
  if (oidcBackchannelAllowLoopback && production) {
    problems.push(
      'OIDC_BACKCHANNEL_ALLOW_LOOPBACK: development and tests only, not with NODE_ENV=production',
    )
  }
  const allowPrivate = env.WEBHOOK_ALLOW_PRIVATE
  if (allowPrivate !== undefined && allowPrivate !== '' && !/^(true|false)$/.test(allowPrivate)) {
    problems.push('WEBHOOK_ALLOW_PRIVATE: must be true or false')
  }
  const webhookRetrySchedule = parseRetrySchedule(env.WEBHOOK_RETRY_SCHEDULE, problems)
  const webhookWorker = env.WEBHOOK_WORKER
  if (
    webhookWorker !== undefined &&
    webhookWorker !== '' &&
    !/^(true|false)$/.test(webhookWorker)
  ) {
    problems.push('WEBHOOK_WORKER: must be true or false')
  }
  const smtpUrl = emptyToUndefined(env.SMTP_URL)
  if (smtpUrl && !/^smtps?:\/\//.test(smtpUrl)) {
    problems.push('SMTP_URL: must start with smtp:// or smtps://')
  }
  const idp = parseIdp(env, problems)
  const trustProxy = parseTrustProxy(env.TRUST_PROXY, problems)
  const limits = { ...DEFAULT_LIMITS }
  for (const name of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const variable = `RATE_LIMIT_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`
    const raw = env[variable]
    if (raw === undefined || raw === '') continue
    const parsed = parseLimit(raw)
    if (parsed) limits[name] = parsed
    else problems.push(`${variable}: expected POINTS/SECONDS, for example 10/900`)
  }
  const userRetentionDays = parseIntVar(
    'USER_RETENTION_DAYS',
    env.USER_RETENTION_DAYS,
    30,
    problems,
  )

  const hashConcurrency = parseIntVar(
    'HASH_CONCURRENCY',
    env.HASH_CONCURRENCY,
    defaultHashConcurrency(env),
    problems,
  )
  if (hashConcurrency < 1) problems.push('HASH_CONCURRENCY: must be at least 1')
  const hashQueueLimit = parseIntVar(
    'HASH_QUEUE_LIMIT',
    env.HASH_QUEUE_LIMIT,
    16 * Math.max(1, hashConcurrency),
    problems,
  )

  if (problems.length > 0) throw new ConfigError(problems)
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicUrl,
    databaseUrl,
    databaseReadUrl,
    databaseReadMaxLagMs,
    dataDir,
    redisUrl,
    jwtSecret,
    jwtPreviousSecrets,
    jwtAlg,
    jwtPrivateKeys,
    encryptionKeys,
    oidcSigningKeys,
    oidcBackchannelAllowLoopback,
    webhookAllowPrivate: allowPrivate === 'true',
    webhookRetrySchedule,
    webhookWorker: webhookWorker !== 'false',
    smtpUrl,
    mailFrom: env.MAIL_FROM || 'no-reply@localhost',
    idp,
    trustProxy,
    tenantCreationToken: emptyToUndefined(env.TENANT_CREATION_TOKEN),
    metricsToken: emptyToUndefined(env.METRICS_TOKEN),
    production,
    logLevel: env.LOG_LEVEL || (production ? 'info' : 'info'),
    limits,
    userRetentionDays,
    revocationPollMs: 1000,
    hashConcurrency,
    hashQueueLimit,
  }
}

/** CONTRACT §13: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [
  5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
]

function parseRetrySchedule(value: string | undefined, problems: string[]): number[] {
  if (value === undefined || value.trim() === '') return DEFAULT_WEBHOOK_RETRY_SCHEDULE
  const parts = value.split(',').map((p) => p.trim())
  if (parts.some((p) => !/^\d{1,6}$/.test(p))) {
    problems.push('WEBHOOK_RETRY_SCHEDULE: comma-separated whole seconds, e.g. 5,300,1800')
    return DEFAULT_WEBHOOK_RETRY_SCHEDULE
  }
  return parts.map(Number)
}

function parseIdp(env: Env, problems: string[]): IdpConfig | undefined {
  const issuer = emptyToUndefined(env.IDP_ISSUER)
  const authorizationUrl = emptyToUndefined(env.IDP_AUTHORIZATION_URL)
  const tokenUrl = emptyToUndefined(env.IDP_TOKEN_URL)
  const userinfoUrl = emptyToUndefined(env.IDP_USERINFO_URL)
  const scopes = env.IDP_SCOPES || 'openid email profile'
  if (!issuer && !authorizationUrl && !tokenUrl && !userinfoUrl) return undefined
  for (const [name, value] of Object.entries({
    IDP_ISSUER: issuer,
    IDP_AUTHORIZATION_URL: authorizationUrl,
    IDP_TOKEN_URL: tokenUrl,
    IDP_USERINFO_URL: userinfoUrl,
  })) {
    if (value && !isHttpUrl(value)) problems.push(`${name}: must be an http(s) URL`)
  }
  if (!issuer && !(authorizationUrl && tokenUrl && userinfoUrl)) {
    problems.push(
      'IDP_ISSUER: set it, or all three of IDP_AUTHORIZATION_URL, IDP_TOKEN_URL and IDP_USERINFO_URL',
    )
  }
  return { issuer, authorizationUrl, tokenUrl, userinfoUrl, scopes }
}

function parseEncryptionKeys(raw: string, problems: string[], missing: boolean): EncryptionKey[] {
  if (missing) return []
  const keys: EncryptionKey[] = []
  for (const entry of splitList(raw)) {
    const match = /^(v\d+):([A-Za-z0-9+/]+={0,2})$/.exec(entry)
    const key = match ? Buffer.from(match[2], 'base64') : undefined
    if (!match || !key || key.length !== 32) {
      problems.push('ENCRYPTION_KEYS: expected v<N>:<base64 of 32 bytes>, comma separated')
      return []
    }
    if (keys.some((k) => k.version === match[1])) {
      problems.push(`ENCRYPTION_KEYS: version ${match[1]} appears twice`)
      return []
    }
    keys.push({ version: match[1], key })
  }
  if (keys.length === 0) problems.push('ENCRYPTION_KEYS: at least one key is required')
  return keys
}

function parseJwtAlg(raw: string | undefined, problems: string[]): JwtAlgorithm {
  if (raw === undefined || raw === '') return 'HS256'
  const found = JWT_ALGORITHMS.find((alg) => alg === raw)
  if (found) return found
  problems.push(`JWT_ALG: must be one of ${JWT_ALGORITHMS.join(', ')}`)
  return 'HS256'
}

/**
 * JWT_PRIVATE_KEYS (CONTRACT §10): concatenated PEM blocks, newest first, each a key of
 * JWT_ALG's type. Unset in development: one key generated once and kept in DATA_DIR.
 */
function parseJwtPrivateKeys(
  raw: string | undefined,
  alg: JwtAlgorithm,
  dataDir: string,
  production: boolean,
  problems: string[],
): string[] {
  if (alg === 'HS256') {
    if (raw) problems.push('JWT_PRIVATE_KEYS: only used with JWT_ALG=ES256 or EdDSA')
    return []
  }
  if (!raw && production) return [] // reported as required above
  const parsed = parsePrivateKeys(raw || loadDevJwtKey(dataDir, alg), alg)
  if ('problem' in parsed) {
    problems.push(`JWT_PRIVATE_KEYS: ${parsed.problem}`)
    return []
  }
  return parsed.keys
}

/** The development signing key of `alg`: generated once, then read back from DATA_DIR. */
function loadDevJwtKey(dataDir: string, alg: AsymmetricAlgorithm): string {
  return loadDevKeys(dataDir, `dev-jwt-${alg.toLowerCase()}.pem`, () => [
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
      : generateKeyPairSync('ed25519').privateKey,
  ])
}

/**
 * OIDC_SIGNING_KEYS (CONTRACT §11): PEM keys, newest first (lib/oidc-keys.ts). Unset in
 * development: an RSA and an EC key generated once in DATA_DIR; unset in production: the
 * OpenID provider is off, so no instance signs with a key the others do not hold.
 */
function parseOidcKeys(
  raw: string | undefined,
  dataDir: string,
  production: boolean,
  problems: string[],
): string[] {
  if (!raw && production) return []
  const parsed = parseOidcSigningKeys(raw || loadDevOidcKeys(dataDir))
  if ('problem' in parsed) {
    problems.push(`OIDC_SIGNING_KEYS: ${parsed.problem}`)
    return []
  }
  return parsed.keys
}

interface DevSecrets {
  jwtSecret: string
  encryptionKeys: string
}

let devSecretsCache: { dir: string; secrets: DevSecrets } | undefined

/** Development secrets: generated once, then read back from DATA_DIR on every start. */
function loadDevSecrets(dataDir: string): DevSecrets {
  if (devSecretsCache?.dir === dataDir) return devSecretsCache.secrets
  const file = join(dataDir, 'dev-secrets.json')
  let secrets: DevSecrets
  try {
    secrets = JSON.parse(readFileSync(file, 'utf8')) as DevSecrets
  } catch {
    secrets = {
      jwtSecret: randomBytes(48).toString('base64url'),
      encryptionKeys: `v1:${randomBytes(32).toString('base64')}`,
    }
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' })
  }
  devSecretsCache = { dir: dataDir, secrets }
  return secrets
}

function parsePort(raw: string | undefined, problems: string[]): number {
  if (raw === undefined || raw === '') return 3000
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    problems.push('PORT: must be an integer from 0 to 65535')
    return 3000
  }
  return n
}

function parseIntVar(name: string, raw: string | undefined, def: number, problems: string[]) {
  if (raw === undefined || raw === '') return def
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 0) {
    problems.push(`${name}: must be a non-negative integer`)
    return def
  }
  return n
}

function parseTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false' || raw === '0') return false
  if (raw === 'true') return true
  if (/^[1-9]\d?$/.test(raw)) return Number(raw)
  const entries = raw.split(',').map((s) => s.trim())
  if (entries.every((e) => /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(e))) return entries.join(',')
  problems.push(
    'TRUST_PROXY: must be true, false, a number of proxies, or a list of proxy addresses',
  )
  return false
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

function splitList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}
