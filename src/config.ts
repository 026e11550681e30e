// The service's configuration: the environment read once at start through its schema
// (config/schema.ts, every variable with its type, default and CONTRACT section), then the
// rules that tie variables together. Nothing else in src/ reads process.env but the start's
// bootstrap (server.ts, strip-cache.js, main.ts); buildApp() receives a Config.
import { resolve } from 'node:path'
import { loadDevJwtKey, loadDevSecrets } from './config/dev-keys.ts'
import { limitVariable } from './config/limits.ts'
import type { EncryptionKey, RedisSentinel, SocialEndpoints } from './config/parsers.ts'
import { parseEncryptionKeys } from './config/parsers.ts'
import { ENV_SCHEMA } from './config/schema.ts'
import { readEnvironment, type Values, type Variable } from './config/variables.ts'
import type { PoolMode } from './db/client.ts'
import { type JwtAlgorithm, parsePrivateKeys } from './lib/jwt.ts'
import { DEFAULT_LIMITS, type Limits } from './lib/limits.ts'
import { loadDevOidcKeys, parseOidcSigningKeys } from './lib/oidc-keys.ts'
import { defaultHashConcurrency } from './lib/passwords.ts'

export type { EncryptionKey, RedisSentinel, SocialEndpoints } from './config/parsers.ts'
export { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from './config/parsers.ts'

export interface Config {
  port: number
  host: string
  publicUrl: string
  /** `postgres://…`, `memory://`, or undefined for PGlite in `dataDir`. */
  databaseUrl: string | undefined
  dataDir: string
  /** DATABASE_READ_URL (CONTRACT §15): a streaming replica for the reads that may lag. */
  databaseReadUrl: string | undefined
  /** DATABASE_READ_MAX_LAG_MS: a replica further behind than this is bypassed. */
  databaseReadMaxLagMs: number
  /** DATABASE_POOL_MODE (CONTRACT §15): `transaction` behind a PgBouncer in transaction mode. */
  databasePoolMode: PoolMode
  redisUrl: string | undefined
  /**
   * REDIS_SENTINELS and REDIS_SENTINEL_MASTER (CONTRACT §15): Redis found through Sentinel,
   * which names the master and follows its failover. Empty when REDIS_URL (or nothing) is used.
   */
  redisSentinels: RedisSentinel[]
  redisSentinelMaster: string | undefined
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
  /** OIDC_BACKCHANNEL_ALLOW_LOOPBACK=true, development and tests only (see the schema). */
  oidcBackchannelAllowLoopback: boolean
  /** PWNED_PASSWORDS_URL (CONTRACT §21): the range API's base, when set. */
  pwnedPasswordsUrl: string | undefined
  /** CAPTCHA_VERIFY_URL_* (CONTRACT §21): siteverify endpoints in place of the providers'. */
  captchaVerifyUrls: { turnstile?: string; hcaptcha?: string; recaptcha?: string }
  /** WEBHOOK_ALLOW_PRIVATE=true (CONTRACT §13): tenant-configured URLs may be internal. */
  webhookAllowPrivate: boolean
  /** SOCIAL_PROVIDER_ENDPOINTS (CONTRACT §19), development and tests only. */
  socialProviderEndpoints: SocialEndpoints
  /** WEBHOOK_RETRY_SCHEDULE: seconds before each retry of a failed webhook delivery. */
  webhookRetrySchedule: number[]
  /** WEBHOOK_WORKER=false: this instance never delivers webhooks (default true). */
  webhookWorker: boolean
  smtpUrl: string | undefined
  mailFrom: string
  idp: IdpConfig | undefined
  /** false, true or a number of proxies, or the trusted proxies' addresses (TRUST_PROXY). */
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
  const { values: v, problems } = readEnvironment(ENV_SCHEMA, env)
  const given = (name: string) => env[name] !== undefined && env[name] !== ''
  const production = v.NODE_ENV === 'production'
  const dataDir = resolve(v.DATA_DIR)
  const devSecrets = production ? undefined : () => loadDevSecrets(dataDir)

  if (given('DATABASE_READ_URL') && !v.DATABASE_URL?.startsWith('postgres')) {
    problems.push('DATABASE_READ_URL: needs a PostgreSQL DATABASE_URL (the primary)')
  }
  const redisSentinels = v.REDIS_SENTINELS ?? []
  if (redisSentinels.length > 0 && given('REDIS_URL')) {
    problems.push('REDIS_URL: leave it unset when REDIS_SENTINELS is set')
  }
  if (redisSentinels.length > 0 && !v.REDIS_SENTINEL_MASTER) {
    problems.push('REDIS_SENTINEL_MASTER: required with REDIS_SENTINELS (the monitored name)')
  }
  if (v.REDIS_SENTINEL_MASTER && !given('REDIS_SENTINELS')) {
    problems.push('REDIS_SENTINELS: required with REDIS_SENTINEL_MASTER (host:port,…)')
  }
  if (production && given('SOCIAL_PROVIDER_ENDPOINTS')) {
    problems.push(
      'SOCIAL_PROVIDER_ENDPOINTS: development and tests only, not with NODE_ENV=production',
    )
  }
  if (production) {
    for (const [name, variable] of variables()) {
      // JWT_PRIVATE_KEYS signs only with a public-key algorithm; JWT_SECRET is due always.
      if (name === 'JWT_PRIVATE_KEYS' && v.JWT_ALG === 'HS256') continue
      if (variable.production === 'required' && !given(name)) {
        problems.push(`${name}: required when NODE_ENV=production`)
      }
      if (variable.production === 'refused' && env[name] === 'true') {
        problems.push(`${name}: development and tests only, not with NODE_ENV=production`)
      }
    }
  }
  const jwtSecret = v.JWT_SECRET ?? devSecrets?.().jwtSecret ?? ''
  if (!production && Buffer.byteLength(jwtSecret, 'utf8') < 32 && !given('JWT_SECRET')) {
    problems.push('JWT_SECRET: must be at least 32 bytes') // a dev-secrets.json edited by hand
  }
  const jwtPrivateKeys = jwtKeys(v.JWT_PRIVATE_KEYS, v.JWT_ALG, dataDir, production, problems)
  const encryptionKeys = v.ENCRYPTION_KEYS ?? devEncryptionKeys(devSecrets?.(), problems)
  const oidcSigningKeys =
    v.OIDC_SIGNING_KEYS?.keys ?? (production ? [] : devOidcKeys(dataDir, problems))
  const idp = identityProvider(v, given, problems)
  const hashConcurrency =
    v.HASH_CONCURRENCY ?? defaultHashConcurrency({ UV_THREADPOOL_SIZE: v.UV_THREADPOOL_SIZE })
  const limits = Object.fromEntries(
    (Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]).map((name) => [
      name,
      (v as Record<string, unknown>)[limitVariable(name)],
    ]),
  ) as unknown as Limits

  if (problems.length > 0) throw new ConfigError(problems)
  return {
    port: v.PORT,
    host: v.HOST,
    publicUrl: v.PUBLIC_URL ?? `http://localhost:${v.PORT}`,
    databaseUrl: v.DATABASE_URL,
    dataDir,
    databasePoolMode: v.DATABASE_POOL_MODE,
    databaseReadUrl: v.DATABASE_READ_URL,
    databaseReadMaxLagMs: v.DATABASE_READ_MAX_LAG_MS,
    redisUrl: v.REDIS_URL,
    redisSentinels,
    redisSentinelMaster: v.REDIS_SENTINEL_MASTER,
    jwtSecret,
    jwtPreviousSecrets: v.JWT_PREVIOUS_SECRETS ?? [],
    jwtAlg: v.JWT_ALG,
    jwtPrivateKeys,
    encryptionKeys,
    oidcSigningKeys,
    oidcBackchannelAllowLoopback: v.OIDC_BACKCHANNEL_ALLOW_LOOPBACK,
    pwnedPasswordsUrl: v.PWNED_PASSWORDS_URL,
    captchaVerifyUrls: {
      turnstile: v.CAPTCHA_VERIFY_URL_TURNSTILE,
      hcaptcha: v.CAPTCHA_VERIFY_URL_HCAPTCHA,
      recaptcha: v.CAPTCHA_VERIFY_URL_RECAPTCHA,
    },
    webhookAllowPrivate: v.WEBHOOK_ALLOW_PRIVATE,
    socialProviderEndpoints: v.SOCIAL_PROVIDER_ENDPOINTS ?? {},
    webhookRetrySchedule: v.WEBHOOK_RETRY_SCHEDULE,
    webhookWorker: v.WEBHOOK_WORKER,
    smtpUrl: v.SMTP_URL,
    mailFrom: v.MAIL_FROM,
    idp,
    trustProxy: v.TRUST_PROXY,
    tenantCreationToken: v.TENANT_CREATION_TOKEN,
    metricsToken: v.METRICS_TOKEN,
    production,
    logLevel: v.LOG_LEVEL,
    limits,
    userRetentionDays: v.USER_RETENTION_DAYS,
    revocationPollMs: 1000,
    hashConcurrency,
    hashQueueLimit: v.HASH_QUEUE_LIMIT ?? 16 * Math.max(1, hashConcurrency),
  }
}

function variables(): [string, Variable][] {
  return Object.entries(ENV_SCHEMA.properties) as unknown as [string, Variable][]
}

type Settings = Values<typeof ENV_SCHEMA.properties>

/** The IdP of hosted sign-in (CONTRACT §1): by discovery, or by its three endpoints. */
const ENDPOINTS = ['IDP_AUTHORIZATION_URL', 'IDP_TOKEN_URL', 'IDP_USERINFO_URL']

function identityProvider(
  v: Settings,
  given: (name: string) => boolean,
  problems: string[],
): IdpConfig | undefined {
  const idp = {
    issuer: v.IDP_ISSUER,
    authorizationUrl: v.IDP_AUTHORIZATION_URL,
    tokenUrl: v.IDP_TOKEN_URL,
    userinfoUrl: v.IDP_USERINFO_URL,
    scopes: v.IDP_SCOPES,
  }
  // Given, valid or not: a mistyped endpoint is still a choice of the explicit ones.
  if (!['IDP_ISSUER', ...ENDPOINTS].some(given)) return undefined
  if (!given('IDP_ISSUER') && !ENDPOINTS.every(given)) {
    problems.push(
      'IDP_ISSUER: set it, or all three of IDP_AUTHORIZATION_URL, IDP_TOKEN_URL and IDP_USERINFO_URL',
    )
  }
  return idp
}

/**
 * JWT_PRIVATE_KEYS (CONTRACT §10): PEM blocks of JWT_ALG's key type, newest first; refused
 * with HS256. Unset in development: one key generated once and kept in DATA_DIR.
 */
function jwtKeys(
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
  if (!raw && production) return [] // reported as required
  const parsed = parsePrivateKeys(raw || loadDevJwtKey(dataDir, alg), alg)
  if ('problem' in parsed) {
    problems.push(`JWT_PRIVATE_KEYS: ${parsed.problem}`)
    return []
  }
  return parsed.keys
}

function devEncryptionKeys(
  dev: { encryptionKeys: string } | undefined,
  problems: string[],
): EncryptionKey[] {
  if (!dev) return [] // production: reported as required
  const parsed = parseEncryptionKeys(dev.encryptionKeys)
  if (!('problem' in parsed)) return parsed
  problems.push(`ENCRYPTION_KEYS: ${parsed.problem}`)
  return []
}

function devOidcKeys(dataDir: string, problems: string[]): string[] {
  const parsed = parseOidcSigningKeys(loadDevOidcKeys(dataDir))
  if (!('problem' in parsed)) return parsed.keys
  problems.push(`OIDC_SIGNING_KEYS: ${parsed.problem}`)
  return []
}
