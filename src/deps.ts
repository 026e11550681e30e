// Everything the routes need, built once by buildApp (leaf services first) and handed to
// each module explicitly. Services take only the part they use (`Pick<Deps, …>` or an
// interface of their own): none of them imports this file's values, so there is no cycle.
import type { Redis } from 'ioredis'
import type { Config } from './config.ts'
import type { Database, Db } from './db/client.ts'
import type { ReadRouting } from './db/replica.ts'
import type { BreachedPasswords } from './lib/breached.ts'
import type { Clock } from './lib/clock.ts'
import type { FieldCipher } from './lib/crypto.ts'
import type { AccessTokens } from './lib/jwt.ts'
import type { Mailer } from './lib/mailer.ts'
import type { RateLimits, SignInGuard } from './lib/ratelimit.ts'
import type { SpentOnce } from './lib/spent-once.ts'
import type { ApiKeyCache } from './modules/apikeys/cache.ts'
import type { ApiKeyUsage } from './modules/apikeys/usage.ts'
import type { AuditRecorder } from './modules/audit/recorder.ts'
import type { IdentityProvider } from './modules/federation/idp/provider.ts'
import type { SsoPages } from './modules/federation/pages.ts'
import type { HookCache, HookCalls } from './modules/hooks/cache.ts'
import type { HookCallLog } from './modules/hooks/log.ts'
import type { ProviderPages } from './modules/oidc/pages.ts'
import type { RevocationCache } from './modules/sessions/revocations.ts'
import type { SessionService } from './modules/sessions/service.ts'
import type { TenantCache } from './modules/tenants/cache.ts'
import type { DeliveryOutcomes } from './modules/webhooks/outcomes.ts'

export interface Deps {
  config: Config
  database: Database
  db: Db
  /** Where a read that may lag goes (db/replica.ts): the replica when caught up, else db. */
  reads: ReadRouting
  redis: Redis | undefined
  clock: Clock
  tokens: AccessTokens
  cipher: FieldCipher
  limits: RateLimits
  guard: SignInGuard
  audit: AuditRecorder
  apiKeyUsage: ApiKeyUsage
  /** Live API keys kept in process, checked against Redis's epoch (apikeys/cache.ts). */
  apiKeys: ApiKeyCache
  revocations: RevocationCache
  tenants: TenantCache
  sessions: SessionService
  mailer: Mailer
  /** Webhook delivery attempts by outcome on this instance (for /metrics). */
  webhookOutcomes: DeliveryOutcomes
  /** The breach corpus a new password is checked against (CONTRACT §21). */
  breached: BreachedPasswords
  /** ALTCHA answers already used, until their challenge expires (CONTRACT §21). */
  spentCaptchas: SpentOnce
  /** SAML AuthnRequest IDs already taken, per application, until their window ends (§22). */
  spentSamlRequests: SpentOnce
  /** Each tenant's enabled hooks, kept for 2 s (CONTRACT §21). */
  hooks: HookCache
  /** Real hook calls on this instance: by event and outcome (for /metrics), and logged. */
  hookCalls: HookCalls
  /** Each hook's last calls, written in the background (hooks/log.ts). */
  hookLog: HookCallLog
  /** The external identity provider, when IDP_* is configured. */
  idp: IdentityProvider | undefined
  /** The pages the OpenID providers draw, from the hosted pages (web/oidc-pages.ts). */
  providerPages: ProviderPages
  /** The hosted pages' part of an SSO sign-in (web/sso-pages.ts). */
  ssoPages: SsoPages
}
