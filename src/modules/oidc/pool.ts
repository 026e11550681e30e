// The tenants' Providers, built on demand and kept in a bounded LRU cache (STYLE, "one
// Provider per tenant in a bounded pool"): a Provider holds no state of its own (the
// adapter keeps everything in PostgreSQL), so evicting one costs only a rebuild (a few
// milliseconds) and memory stays flat however many tenants are touched in turn.

import type { SessionService } from '../sessions/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { signingJwks } from './keys.ts'
import type { ProviderPages } from './pages.ts'
import { buildProvider, type OidcProvider, type ProviderDeps } from './provider.ts'

export const DEFAULT_POOL_SIZE = 200

/** Where routes.ts leaves, on the raw request, how to settle the token endpoint's limits. */
export const SETTLE_TOKEN_LIMITS = Symbol('settleTokenLimits')

/** What a token request came to, for its limits (routes.ts, tokenLimits). */
export type TokenOutcome = 'issued' | 'clientRefused' | 'grantRefused'

/** The answers of an authenticated client's request that are not a refused grant. */
const NOT_REFUSED = new Set(['authorization_pending', 'slow_down', 'server_error'])

interface SettleContext {
  req: { [SETTLE_TOKEN_LIMITS]?: (outcome: TokenOutcome) => Promise<void> }
  body?: unknown
}

/**
 * Runs once the provider has answered, before the answer is sent: what the request came
 * to (invalid_client: its client was not authenticated; another error: its grant was
 * refused; else tokens, or the device flow's pending answers) settles its limits.
 */
async function settleTokenLimits(ctx: SettleContext, next: () => Promise<void>) {
  try {
    await next()
  } finally {
    const settle = ctx.req[SETTLE_TOKEN_LIMITS]
    if (settle) {
      const error = (ctx.body as { error?: unknown } | undefined)?.error
      await settle(
        error === 'invalid_client'
          ? 'clientRefused'
          : typeof error === 'string' && !NOT_REFUSED.has(error)
            ? 'grantRefused'
            : 'issued',
      )
    }
  }
}

interface Entry {
  slug: string
  provider: OidcProvider
  handler: (req: unknown, res: unknown) => void
}

/** Work done on each Provider as it is built (its middleware and event listeners). */
export type ProviderSetup = (provider: OidcProvider, tenant: Pick<Tenant, 'id' | 'slug'>) => void

export class ProviderPool {
  private readonly entries = new Map<string, Entry>()
  private readonly deps: ProviderDeps
  private readonly setups: ProviderSetup[] = []
  readonly max: number

  constructor(deps: ProviderDeps, max = DEFAULT_POOL_SIZE) {
    this.deps = deps
    this.max = max
  }

  get size(): number {
    return this.entries.size
  }

  /** Runs `setup` on every Provider built from now on (call before the first request). */
  onBuild(setup: ProviderSetup): void {
    this.setups.push(setup)
  }

  /** The tenant's request handler; the most recently used entries stay. */
  handler(tenant: Pick<Tenant, 'id' | 'slug'>): Entry['handler'] {
    return this.entry(tenant).handler
  }

  /** The tenant's Provider itself (the hosted pages' interactions). */
  provider(tenant: Pick<Tenant, 'id' | 'slug'>): OidcProvider {
    return this.entry(tenant).provider
  }

  private entry(tenant: Pick<Tenant, 'id' | 'slug'>): Entry {
    const found = this.entries.get(tenant.id)
    if (found && found.slug === tenant.slug) {
      // Map keeps insertion order: re-inserting marks it the most recent.
      this.entries.delete(tenant.id)
      this.entries.set(tenant.id, found)
      return found
    }
    const provider = buildProvider(this.deps, tenant)
    for (const setup of this.setups) setup(provider, tenant)
    ;(provider as unknown as { use(fn: typeof settleTokenLimits): void }).use(settleTokenLimits)
    const entry = { slug: tenant.slug, provider, handler: provider.callback() }
    this.entries.set(tenant.id, entry)
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.entries.delete(oldest)
    }
    return entry
  }
}

/**
 * Readies a request for a Provider (its routes' and the hosted pages' calls alike): the
 * issuer's endpoints, its cookies' Secure flag and the redirects it builds come from
 * PUBLIC_URL, never from the request's Host or a client's X-Forwarded-* (CONTRACT §1); the
 * client address is the one the service decided (TRUST_PROXY). The Provider runs with
 * `proxy` on and reads exactly these headers, overwritten here.
 */
export function asPublicRequest(
  raw: { headers: Record<string, string | string[] | undefined> },
  publicUrl: string,
  ip: string,
): void {
  const url = new URL(publicUrl)
  raw.headers['x-forwarded-host'] = url.host
  raw.headers['x-forwarded-proto'] = url.protocol.slice(0, -1)
  raw.headers['x-forwarded-for'] = ip
}

const pools = new WeakMap<object, ProviderPool>()

/**
 * The one pool of an app's dependencies, shared by the provider's routes and the hosted
 * pages that lead its interactions; undefined when the provider is off (production
 * without OIDC_SIGNING_KEYS).
 */
export function poolOf(
  deps: Omit<ProviderDeps, 'jwks' | 'pages' | 'hookClaims'> & {
    config: { oidcSigningKeys: string[] }
    providerPages: ProviderPages
    sessions: Pick<SessionService, 'providerClaims'>
  },
): ProviderPool | undefined {
  if (deps.config.oidcSigningKeys.length === 0) return undefined
  let pool = pools.get(deps)
  if (!pool) {
    pool = new ProviderPool({
      config: deps.config,
      db: deps.db,
      cipher: deps.cipher,
      clock: deps.clock,
      audit: deps.audit,
      tokens: deps.tokens,
      revocations: deps.revocations,
      jwks: signingJwks(deps.config.oidcSigningKeys),
      pages: deps.providerPages,
      hookClaims: (tenant, userId, clientId, actor) =>
        deps.sessions.providerClaims(tenant, userId, clientId, actor),
    })
    pools.set(deps, pool)
  }
  return pool
}
