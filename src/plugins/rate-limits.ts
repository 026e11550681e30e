// Per-address budgets, declared on the route and taken here, in one hook (CONTRACT §6):
//   config: { rateLimit: 'tokenEndpoints' }
//   config: { rateLimit: { budget: 'codeRequestsPerIp', scope: 'login' } }
// A scope gives a route its own bucket of a shared budget's size (login codes and email
// OTPs are counted apart). The point is taken after the request was validated and before
// the handler runs, so a malformed request costs nothing and a burst gets no more than the
// budget. Budgets per account (sign-in failures) are the SignInGuard's, per admin the auth
// plugin's.
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../deps.ts'
import type { LimitName } from '../lib/ratelimit.ts'

export type RouteRateLimit = LimitName | { budget: LimitName; scope: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit
  }
}

export function installRateLimits(app: FastifyInstance, deps: Pick<Deps, 'limits'>): void {
  app.addHook('preHandler', async (request) => {
    const declared = request.routeOptions.config?.rateLimit
    if (!declared) return
    const { budget, scope } = typeof declared === 'string' ? { budget: declared } : declared
    await deps.limits.hit(budget, scope ? `${scope}:${request.clientIp}` : request.clientIp)
  })
}
