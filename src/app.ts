// buildApp(config): the whole service as a Fastify instance. No listen, no process.env:
// server.ts listens, tests build their own with their own config and clock.

import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import type { Config } from './config.ts'
import { afterCommitErrors, trackCommits } from './db/after-commit.ts'
import { type Database, openDatabase } from './db/client.ts'
import { countEmailConflicts } from './db/cross-tenant.ts'
import { loggableError } from './db/errors.ts'
import { primaryOnly, ReplicaRouting } from './db/replica.ts'
import type { Deps } from './deps.ts'
import { BreachedPasswords } from './lib/breached.ts'
import { type Clock, systemClock } from './lib/clock.ts'
import { FieldCipher } from './lib/crypto.ts'
import { AppError } from './lib/errors.ts'
import { AccessTokens } from './lib/jwt.ts'
import { Mailer } from './lib/mailer.ts'
import { configureHashing, warmPasswords } from './lib/passwords.ts'
import { RateLimits, SignInGuard } from './lib/ratelimit.ts'
import { connectRedis, type RedisTarget } from './lib/redis.ts'
import { SpentOnce } from './lib/spent-once.ts'
import { ApiKeyCache } from './modules/apikeys/cache.ts'
import { ApiKeyUsage } from './modules/apikeys/usage.ts'
import { AuditRecorder } from './modules/audit/recorder.ts'
import { HookCache, HookCalls } from './modules/hooks/cache.ts'
import { HookCallLog } from './modules/hooks/log.ts'
import { RevocationCache } from './modules/sessions/revocations.ts'
import { SessionService } from './modules/sessions/service.ts'
import { templateResolver } from './modules/templates/resolve.ts'
import { TenantCache } from './modules/tenants/cache.ts'
import { accountLockStore } from './modules/users/account-lock.ts'
import { scheduleUserPurge } from './modules/users/admin-purge.ts'
import { DeliveryOutcomes } from './modules/webhooks/outcomes.ts'
import { WebhookWorker } from './modules/webhooks/worker.ts'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './plugins/errors.ts'
import { clientIp } from './plugins/hygiene.ts'
import { installMethodNotAllowed } from './plugins/methods.ts'
import { installMetrics } from './plugins/metrics.ts'
import { installOpenApi } from './plugins/openapi.ts'
import { installValidation, lazySerializers } from './plugins/validation.ts'
import { registerRoutes } from './routes.ts'
import { providerPages } from './web/oidc-pages.ts'
import { ssoPages } from './web/sso-pages.ts'

export interface BuildOptions {
  clock?: Clock
  /** An already-open database (tests share one per file); otherwise opened from config. */
  database?: Database
  /** Run migrations at start (default true). */
  migrate?: boolean
  /**
   * Purge soft-deleted users on a timer (default true). Tests turn it off: a test moves its
   * server's clock, and a timer on that clock would purge other tests' users.
   */
  purgeTimer?: boolean
  /**
   * Deliver webhooks (default: the config's WEBHOOK_WORKER). Tests turn it off for the same
   * reason, and run a WebhookWorker of their own when they deliver.
   */
  webhookWorker?: boolean
  logger?: boolean
  /** HTTP timeouts (CONTRACT §8); tests shorten them to see a 408 in a second. */
  timeouts?: Partial<HttpTimeouts>
}

export const BODY_LIMIT = 64 * 1024

export interface HttpTimeouts {
  /** Headers and body must have fully arrived this long after the request started. */
  requestMs: number
  /** How often Node looks for requests past that time: the 408 comes at most this late. */
  checkMs: number
  /** An idle keep-alive connection is closed after this long. */
  keepAliveMs: number
}

export const HTTP_TIMEOUTS: HttpTimeouts = {
  requestMs: 30_000,
  checkMs: 5_000,
  keepAliveMs: 72_000,
}

export async function buildApp(
  config: Config,
  options: BuildOptions = {},
): Promise<{ app: FastifyInstance; deps: Deps }> {
  const timeouts = { ...HTTP_TIMEOUTS, ...options.timeouts }
  const app = Fastify({
    logger: options.logger === false ? false : logger(config),
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      // Node arms its request-timeout check only for a timeout given at construction:
      // Fastify's own `requestTimeout`, set afterwards, would never fire on a slow body.
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: timeouts.checkMs,
      // 16 KiB of headers at most (Node's default, stated so it cannot drift): 431 beyond.
      maxHeaderSize: 16 * 1024,
    },
    clientErrorHandler,
    // Fastify's own 503 while closing has its own body: refuseWhileClosing sends ours.
    return503OnClosing: false,
    // `true` trusts one hop (the proxy in front), so the client cannot choose its own IP
    // by sending X-Forwarded-For: the address the proxy appended is used.
    trustProxy: trustProxy(config.trustProxy),
    bodyLimit: BODY_LIMIT,
    // A bad request id from a client must not end up in our logs as theirs to choose.
    requestIdHeader: false,
    ajv: { customOptions: { coerceTypes: false } },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers() } },
    frameworkErrors,
  })
  installErrorHandling(app)
  installValidation(app)
  refuseWhileClosing(app)
  // JSON only: any other content type is refused rather than parsed as text.
  app.removeContentTypeParser(['text/plain'])

  // The dummy hash is made on libuv's pool while the app is built (it shortens the start).
  configureHashing({ concurrency: config.hashConcurrency, queueLimit: config.hashQueueLimit })
  const warming = warmPasswords().then(
    () => undefined,
    (error: unknown) => error,
  )
  const database =
    options.database ??
    (await openDatabase(config.databaseUrl, config.dataDir, {
      poolMode: config.databasePoolMode,
    }))
  // After-commit work (db/after-commit.ts) waits for the commit of every transaction.
  trackCommits(database.db)
  afterCommitErrors.onError = (err) => app.log.warn({ err }, 'after-commit work')
  if (options.migrate !== false) await database.migrate()
  const conflicts = await countEmailConflicts(database.db)
  if (conflicts > 0) {
    app.log.warn(
      { accounts: conflicts },
      'accounts share an email address once normalised to NFC; they were not merged (table email_conflicts, README: Upgrading)',
    )
  }
  const redisTarget: RedisTarget | undefined = config.redisUrl
    ? { url: config.redisUrl }
    : config.redisSentinelMaster
      ? { sentinels: config.redisSentinels, master: config.redisSentinelMaster }
      : undefined
  const redis = redisTarget ? await connectRedis(redisTarget, app.log) : undefined
  const clock = options.clock ?? systemClock
  // Leaf services first, then those built on them: each is handed what it uses.
  const db = database.db
  const reads =
    config.databaseReadUrl && database.kind === 'postgres'
      ? await ReplicaRouting.open(db, config.databaseReadUrl, {
          maxLagMs: config.databaseReadMaxLagMs,
          poolMode: config.databasePoolMode,
        })
      : primaryOnly(db)
  const limits = new RateLimits(config.limits, redis)
  const tokens = new AccessTokens({
    keys:
      config.jwtAlg === 'HS256'
        ? { algorithm: 'HS256', secrets: [config.jwtSecret, ...config.jwtPreviousSecrets] }
        : { algorithm: config.jwtAlg, privateKeys: config.jwtPrivateKeys },
    issuer: config.publicUrl,
  })
  const audit = new AuditRecorder(clock)
  const revocations = new RevocationCache({ db, pollMs: config.revocationPollMs, redis })
  // Tenant templates replace a mail's wording in the mailer's background send (CONTRACT §20).
  const mailer = new Mailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    log: app.log,
    templates: templateResolver(db),
  })
  const cipher = new FieldCipher(config.encryptionKeys)
  const hooks = new HookCache(db)
  const hookLog = new HookCallLog(db, (err) => app.log.warn({ err }, 'hook calls log'))
  const hookCalls = new HookCalls(hookLog, app.log)
  const deps: Deps = {
    config,
    database,
    db,
    reads,
    redis,
    clock,
    tokens,
    cipher,
    limits,
    guard: new SignInGuard(limits, accountLockStore(db)),
    audit,
    apiKeyUsage: new ApiKeyUsage(db),
    apiKeys: new ApiKeyCache(redis),
    revocations,
    tenants: new TenantCache(db),
    sessions: new SessionService({
      db,
      clock,
      audit,
      tokens,
      revocations,
      mailer,
      config,
      cipher,
      hooks,
      hookCalls,
      log: app.log,
    }),
    mailer,
    webhookOutcomes: new DeliveryOutcomes(),
    hooks,
    hookCalls,
    hookLog,
    breached: new BreachedPasswords({ base: config.pwnedPasswordsUrl, log: app.log }),
    spentCaptchas: new SpentOnce(redis, 'captcha:spent'),
    spentSamlRequests: new SpentOnce(redis, 'saml:request'),
    // One per instance: the provider's metadata and keys are cached for every tenant.
    // openid-client is loaded only where a provider is configured (issue 10, memory).
    idp: config.idp
      ? new (await import('./modules/federation/idp/provider.ts')).IdentityProvider(config.idp)
      : undefined,
    providerPages: providerPages(db),
    ssoPages: ssoPages({ config, cipher, db }),
  }

  // Before any route is registered: it records them all (405 for a method a path lacks).
  installMethodNotAllowed(app, deps)
  await installOpenApi(app, config)
  await installMetrics(app, deps)
  await registerRoutes(app, deps)

  await deps.revocations.start()
  deps.apiKeyUsage.start()
  reads.start()
  const purge = options.purgeTimer === false ? undefined : scheduleUserPurge(deps, app.log)
  const webhooks =
    (options.webhookWorker ?? config.webhookWorker) ? new WebhookWorker(deps) : undefined
  if (webhooks) {
    webhooks.onError = (err) => app.log.warn({ err }, 'webhook delivery')
    webhooks.onAttemptError = (err, at) => app.log.warn({ err, ...at }, 'webhook attempt failed')
    webhooks.start()
  }
  const failedWarming = await warming
  if (failedWarming) throw failedWarming
  app.addHook('onClose', async () => {
    // Batched API-key last-use times are written before the database closes.
    await deps.apiKeyUsage.stop().catch((err) => app.log.warn({ err }, 'api key usage flush'))
    await purge?.stop()
    await webhooks?.stop()
    await hookLog.flushed()
    await deps.revocations.stop()
    await deps.mailer.drain()
    await reads.stop()
    redis?.disconnect()
    if (!options.database) await database.close()
  })
  return { app, deps }
}

/**
 * Once the app starts closing (SIGTERM), requests that still arrive on kept-alive
 * connections are refused with 503 UNAVAILABLE in the envelope, and their connection
 * closed; requests already in flight finish.
 */
function refuseWhileClosing(app: FastifyInstance): void {
  let closing = false
  app.addHook('preClose', async () => {
    closing = true
  })
  // Hooks on the path of every request are synchronous where they can be: an async hook
  // costs a promise and a turn of the microtask queue per request (issue 10).
  app.addHook('onRequest', (_request, reply, done) => {
    if (closing) {
      reply.header('connection', 'close')
      throw new AppError('unavailable')
    }
    done()
  })
}

/** Fastify's trust setting: a hop count becomes "trust the first n hops" (proxy-addr). */
function trustProxy(setting: Config['trustProxy']) {
  if (setting === false) return false
  const hops = setting === true ? 1 : setting
  if (typeof hops === 'number') return (_address: string, hop: number) => hop < hops
  return hops
}

function logger(config: Config) {
  return {
    level: config.logLevel,
    // Secrets never reach the log: no authorization header, cookies or query strings
    // (OAuth codes and states travel in the query).
    redact: ['req.headers.authorization', 'req.headers.cookie'],
    serializers: {
      // A database error's own message holds the query's parameters: code and message only.
      err: loggableError,
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: request.url.split('?')[0],
          ip: clientIp(request),
        }
      },
    },
  }
}
