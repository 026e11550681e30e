// The environment as one TypeBox schema (STYLE: config as one schema): every variable the
// service reads, with its type, default, meaning and CONTRACT section. config.ts reads it
// once at start (readEnvironment) and applies the rules that tie variables together;
// `npm run docs:config` writes docs/configuration.md from it; test/config-reference.test.ts
// fails when that page is stale or when src/ reads a variable this schema does not declare.
// A new variable is one entry here, or in limits.ts or start.ts (and its field in Config).
import Type from 'typebox'
import { JWT_ALGORITHMS } from '../lib/jwt.ts'
import { parseOidcSigningKeys } from '../lib/oidc-keys.ts'
import { limits } from './limits.ts'
import {
  hmacSecret,
  hmacSecrets,
  parseEncryptionKeys,
  parseRetrySchedule,
  parseSentinels,
  parseSocialEndpoints,
  parseTrustProxy,
} from './parsers.ts'
import { start } from './start.ts'
import { flag, httpUrl, integer, oneOf, parsed, text, urlOf } from './variables.ts'

const DEV_GENERATED = 'development: generated once, kept in `DATA_DIR`'

const listening = {
  PORT: integer({
    group: 'Listening and URLs',
    contract: '§1',
    kind: 'integer 0–65535',
    default: '3000',
    maximum: 65535,
    errorMessage: 'must be an integer from 0 to 65535',
    description: 'The port the service listens on.',
  }),
  HOST: text({
    group: 'Listening and URLs',
    contract: '§1',
    kind: 'address',
    default: '127.0.0.1',
    description:
      'The address the service listens on. The container image sets `0.0.0.0` (every address of the container).',
  }),
  PUBLIC_URL: Type.Optional(
    httpUrl({
      group: 'Listening and URLs',
      contract: '§1',
      kind: 'http(s) URL',
      shown: '`http://localhost:$PORT`',
      description:
        "The service's public base URL: the JWT `iss`, `logoUrl`, OAuth `redirect_uri`s, the OpenID issuer of each tenant. Trailing slashes are dropped.",
    }),
  ),
}

const database = {
  DATABASE_URL: Type.Optional(
    urlOf(['postgres', 'postgresql', 'memory'], {
      group: 'Database',
      contract: '§1',
      kind: 'URL',
      shown: 'embedded PostgreSQL (PGlite) in `$DATA_DIR/pglite`',
      secret: true,
      description:
        '`postgres://…` for PostgreSQL (15 or later); `memory://` for a throw-away embedded database.',
    }),
  ),
  DATA_DIR: text({
    group: 'Database',
    contract: '§1',
    kind: 'path',
    default: './data',
    description:
      'The embedded database and the generated development secrets and keys. The container image sets `/data` (its volume).',
  }),
  DATABASE_POOL_MODE: oneOf(['session', 'transaction'], {
    group: 'Database',
    contract: '§15',
    kind: '`session` or `transaction`',
    default: 'session',
    description:
      '`transaction` behind a PgBouncer in transaction pooling mode: no named prepared statements, no session state across transactions.',
  }),
  DATABASE_READ_URL: Type.Optional(
    urlOf(['postgres', 'postgresql'], {
      group: 'Database',
      contract: '§15',
      kind: 'URL',
      shown: 'unset: every read on the primary',
      secret: true,
      description:
        'A streaming replica of the primary (`DATABASE_URL`, which must then be PostgreSQL): the users list, the audit list and the audit export read there when it has replayed every write made before the read.',
    }),
  ),
  DATABASE_READ_MAX_LAG_MS: integer({
    group: 'Database',
    contract: '§15',
    kind: 'milliseconds',
    default: '1000',
    description:
      'A replica further behind than this (measured by LSN) is bypassed, and `/ready` shows `checks.replica: "lagging"`.',
  }),
}

const redis = {
  REDIS_URL: Type.Optional(
    urlOf(['redis', 'rediss'], {
      group: 'Redis',
      contract: '§1',
      kind: 'URL',
      shown: 'unset: in-process',
      secret: true,
      description:
        'Rate limits, kept API keys and revocation broadcasts shared by every instance, so that several behave as one.',
    }),
  ),
  REDIS_SENTINELS: Type.Optional(
    parsed(parseSentinels, {
      group: 'Redis',
      contract: '§15',
      kind: '`host:port`, comma separated',
      description:
        'Redis through Sentinel: the sentinels to ask for the master (IPv6 hosts in brackets); `REDIS_URL` then stays unset.',
    }),
  ),
  REDIS_SENTINEL_MASTER: Type.Optional(
    text({
      group: 'Redis',
      contract: '§15',
      kind: 'name',
      description:
        'The name the sentinels monitor the master under; required with `REDIS_SENTINELS`.',
    }),
  ),
}

const keys = {
  JWT_SECRET: Type.Optional(
    parsed(hmacSecret, {
      group: 'Signing and encryption keys',
      contract: '§1',
      kind: 'text, 32 bytes or more',
      shown: DEV_GENERATED,
      secret: true,
      production: 'required',
      description:
        'The HS256 signing key of access tokens (its UTF-8 bytes); production needs it whatever `JWT_ALG` is.',
    }),
  ),
  JWT_PREVIOUS_SECRETS: Type.Optional(
    parsed(hmacSecrets, {
      group: 'Signing and encryption keys',
      contract: '§1',
      kind: 'comma list',
      shown: 'none',
      secret: true,
      description: 'Older signing keys still accepted for verification (rotation).',
    }),
  ),
  JWT_ALG: oneOf(JWT_ALGORITHMS, {
    group: 'Signing and encryption keys',
    contract: '§10',
    kind: '`HS256`, `ES256` or `EdDSA`',
    default: 'HS256',
    description:
      'The access-token algorithm: `HS256` (the secrets above), `ES256` (P-256) or `EdDSA` (Ed25519), whose public keys `GET /.well-known/jwks.json` serves. Switching it refuses the access tokens already out (clients refresh).',
  }),
  JWT_PRIVATE_KEYS: Type.Optional(
    text({
      group: 'Signing and encryption keys',
      contract: '§10',
      kind: 'PEM blocks',
      shown: `with \`ES256\`/\`EdDSA\`, ${DEV_GENERATED}`,
      secret: true,
      production: 'required',
      description:
        'Only with `ES256`/`EdDSA`, so required in production only then (refused with `HS256`): PEM private keys (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`) one after the other, newest first (a line break may be written `\\n`); the first signs, all verify; `kid` is each key’s RFC 7638 thumbprint.',
    }),
  ),
  ENCRYPTION_KEYS: Type.Optional(
    parsed(parseEncryptionKeys, {
      group: 'Signing and encryption keys',
      contract: '§1',
      kind: '`v<N>:<base64 of 32 bytes>`, comma list',
      shown: DEV_GENERATED,
      secret: true,
      production: 'required',
      description:
        'Field encryption keys (TOTP secrets, client secrets, sealed imported hashes): the first encrypts, all decrypt. Rotate with `npm run rotate-keys`.',
    }),
  ),
}

const mail = {
  SMTP_URL: Type.Optional(
    urlOf(['smtp', 'smtps'], {
      group: 'Mail',
      contract: '§1',
      kind: 'URL',
      shown: 'unset: mail is written to the log (development only)',
      secret: true,
      production: 'required',
      description: 'Outgoing mail, `smtp://user:pass@host:port`.',
    }),
  ),
  MAIL_FROM: text({
    group: 'Mail',
    contract: '§1',
    kind: 'address',
    default: 'no-reply@localhost',
    description: 'The sender of every mail.',
  }),
}

const identityProvider = {
  IDP_ISSUER: Type.Optional(
    httpUrl({
      group: 'Identity provider (hosted sign-in)',
      contract: '§1',
      kind: 'http(s) URL',
      shown: 'unset: OAuth routes answer 400 `idp_not_configured`',
      description:
        'The external identity provider, found by OIDC discovery at `$IDP_ISSUER/.well-known/openid-configuration`; or set the three endpoints below instead.',
    }),
  ),
  IDP_AUTHORIZATION_URL: Type.Optional(
    httpUrl({
      group: 'Identity provider (hosted sign-in)',
      contract: '§1',
      kind: 'http(s) URL',
      description: 'With `IDP_TOKEN_URL` and `IDP_USERINFO_URL`: the provider without discovery.',
    }),
  ),
  IDP_TOKEN_URL: Type.Optional(
    httpUrl({
      group: 'Identity provider (hosted sign-in)',
      contract: '§1',
      kind: 'http(s) URL',
      description: 'See `IDP_AUTHORIZATION_URL`.',
    }),
  ),
  IDP_USERINFO_URL: Type.Optional(
    httpUrl({
      group: 'Identity provider (hosted sign-in)',
      contract: '§1',
      kind: 'http(s) URL',
      description: 'See `IDP_AUTHORIZATION_URL`.',
    }),
  ),
  IDP_SCOPES: text({
    group: 'Identity provider (hosted sign-in)',
    contract: '§1',
    kind: 'space-separated scopes',
    default: 'openid email profile',
    description: 'The scopes asked of the identity provider.',
  }),
  SOCIAL_PROVIDER_ENDPOINTS: Type.Optional(
    parsed(parseSocialEndpoints, {
      group: 'Identity provider (hosted sign-in)',
      contract: '§19',
      kind: 'JSON',
      shown: 'unset: each preset’s public endpoints',
      description:
        'Development and tests only (refused with `NODE_ENV=production`): a JSON object that replaces social presets’ public endpoints, e.g. `{"google": {"issuer": "http://127.0.0.1:4010"}, "github": {"authorizationUrl": "…", "tokenUrl": "…", "apiUrl": "…"}, "apple": {"issuer": "…", "audience": "…"}}` (Apple’s `audience`: the client secret’s `aud`), so each preset’s own rules run against a local stand-in.',
    }),
  ),
}

const openidProvider = {
  OIDC_SIGNING_KEYS: Type.Optional(
    parsed(parseOidcSigningKeys, {
      group: 'OpenID provider',
      contract: '§11',
      kind: 'PEM blocks',
      shown: `${DEV_GENERATED} (an RSA and an EC key); production: unset turns the provider off (its paths 404)`,
      secret: true,
      description:
        "The OpenID provider's keys: PEM private keys one after the other, newest first. RSA keys (2048 bits or more) sign RS256, the default, and at least one is required; EC P-256 keys offer ES256. The first of each type signs; all are published at `{issuer}/jwks`.",
    }),
  ),
  OIDC_BACKCHANNEL_ALLOW_LOOPBACK: flag({
    group: 'OpenID provider',
    contract: '§11',
    default: 'false',
    production: 'refused',
    description:
      "Development and tests only: `true` lets an application's back-channel logout URI be http(s) on `localhost`, `127.0.0.1` or `[::1]`, and the provider call it (private and link-local addresses stay refused).",
  }),
}

const webhooks = {
  PWNED_PASSWORDS_URL: Type.Optional(
    httpUrl({
      group: 'Webhooks',
      contract: '§21',
      kind: 'http(s) URL',
      shown: 'unset: only the shipped list of breached passwords is checked',
      description:
        'The base of a Pwned Passwords range API (e.g. `https://api.pwnedpasswords.com`): a new password is also looked up at `{base}/range/{first 5 hex of its SHA-1}` with `Add-Padding: true` (k-anonymity: the password and its full hash never leave the service); an answer slower than 1 s or an error is logged and skipped, never blocking a sign-up.',
    }),
  ),
  CAPTCHA_VERIFY_URL_TURNSTILE: Type.Optional(
    httpUrl({
      group: 'Webhooks',
      contract: '§21',
      kind: 'http(s) URL',
      shown: 'unset: `https://challenges.cloudflare.com/turnstile/v0/siteverify`',
      description:
        'Where a Cloudflare Turnstile token of a tenant whose `captcha.provider` is `turnstile` is verified (its siteverify endpoint; a stand-in for tests). Called through the egress guard (`WEBHOOK_ALLOW_PRIVATE` decides whether an internal address may be reached), within 5 s; a timeout, a non-2xx or an unreadable answer is `captcha_invalid`.',
    }),
  ),
  CAPTCHA_VERIFY_URL_HCAPTCHA: Type.Optional(
    httpUrl({
      group: 'Webhooks',
      contract: '§21',
      kind: 'http(s) URL',
      shown: 'unset: `https://api.hcaptcha.com/siteverify`',
      description:
        'Where a hCaptcha token of a tenant whose `captcha.provider` is `hcaptcha` is verified (its siteverify endpoint; a stand-in for tests). Called through the egress guard (`WEBHOOK_ALLOW_PRIVATE` decides whether an internal address may be reached), within 5 s; a timeout, a non-2xx or an unreadable answer is `captcha_invalid`.',
    }),
  ),
  CAPTCHA_VERIFY_URL_RECAPTCHA: Type.Optional(
    httpUrl({
      group: 'Webhooks',
      contract: '§21',
      kind: 'http(s) URL',
      shown: 'unset: `https://www.google.com/recaptcha/api/siteverify`',
      description:
        'Where a reCAPTCHA token of a tenant whose `captcha.provider` is `recaptcha` is verified (its siteverify endpoint; a stand-in for tests). Called through the egress guard (`WEBHOOK_ALLOW_PRIVATE` decides whether an internal address may be reached), within 5 s; a timeout, a non-2xx or an unreadable answer is `captcha_invalid`.',
    }),
  ),
  WEBHOOK_ALLOW_PRIVATE: flag({
    group: 'Webhooks',
    contract: '§13',
    default: 'false',
    description:
      '`true` lets outbound calls to URLs a tenant admin configures (webhooks, SSO connections’ OIDC issuers) reach loopback, private, link-local and unspecified addresses, and those URLs be `http`; for development and tests.',
  }),
  WEBHOOK_RETRY_SCHEDULE: parsed(parseRetrySchedule, {
    group: 'Webhooks',
    contract: '§13',
    kind: 'seconds, comma separated',
    default: '5,300,1800,7200,18000,36000,50400,72000,86400',
    description: 'Seconds before each retry of a failed webhook delivery.',
  }),
  WEBHOOK_WORKER: flag({
    group: 'Webhooks',
    contract: '§13',
    default: 'true',
    description:
      '`false` keeps this instance from delivering webhooks (another instance on the same database must deliver them).',
  }),
}

const access = {
  TRUST_PROXY: parsed(parseTrustProxy, {
    group: 'Access and proxies',
    contract: '§1, §8',
    kind: '`true`, `false`, a number, or addresses',
    default: 'false',
    description:
      '`true`: one proxy in front; the client IP is the `X-Forwarded-For` entry it appended (rate limits, audit). A number: that many proxies. Or a comma list of proxy addresses/CIDRs. Never the left-most entry, which the client writes.',
  }),
  TENANT_CREATION_TOKEN: Type.Optional(
    text({
      group: 'Access and proxies',
      contract: '§1',
      kind: 'text',
      shown: 'unset: open',
      secret: true,
      description: 'When set, `POST /v1/tenants` requires `Authorization: Bearer <it>`.',
    }),
  ),
  METRICS_TOKEN: Type.Optional(
    text({
      group: 'Access and proxies',
      contract: '§10',
      kind: 'text',
      shown: 'unset: `/metrics` is 404',
      secret: true,
      description:
        'When set, `GET /metrics` serves Prometheus metrics to `Authorization: Bearer <it>`.',
    }),
  ),
}

const capacity = {
  USER_RETENTION_DAYS: integer({
    group: 'Capacity and retention',
    contract: '§9',
    kind: 'days',
    default: '30',
    description: 'Days a deleted user is kept before the purge removes it.',
  }),
  HASH_CONCURRENCY: Type.Optional(
    integer({
      group: 'Capacity and retention',
      kind: 'integer, at least 1',
      minimum: 1,
      shown: 'one per core, plus one (at most `UV_THREADPOOL_SIZE`)',
      description:
        "Password hashes (argon2id) run at once, on libuv's thread pool; `src/server.ts` sizes that pool to two threads per core plus two unless `UV_THREADPOOL_SIZE` is set.",
    }),
  ),
  HASH_QUEUE_LIMIT: Type.Optional(
    integer({
      group: 'Capacity and retention',
      kind: 'integer',
      shown: '16 × `HASH_CONCURRENCY`',
      description:
        'Sign-ins, sign-ups and password changes that may wait for a hash; beyond it they answer `503 unavailable` with `Retry-After: 1` at once, and the try does not count as a failure.',
    }),
  ),
}

const modeAndLogs = {
  NODE_ENV: Type.Optional(
    text({
      group: 'Mode and logs',
      contract: '§1',
      kind: '`production` or anything else',
      shown: 'development',
      description:
        '`production` refuses to start without the variables marked required, or with those marked refused, and generates no development secret; any other value (or none) is development.',
    }),
  ),
  LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
    group: 'Mode and logs',
    kind: 'pino level',
    default: 'info',
    description: 'The least level of the JSON log lines written.',
  }),
}

export const ENV_SCHEMA = Type.Object({
  ...listening,
  ...database,
  ...redis,
  ...keys,
  ...mail,
  ...identityProvider,
  ...openidProvider,
  ...webhooks,
  ...access,
  ...limits,
  ...capacity,
  ...modeAndLogs,
  ...start,
})
