// Per-address budgets, declared on the route and taken here, in one hook (CONTRACT §6):
//   config: { rateLimit: 'tokenEndpoints' }
//   config: { rateLimit: { budget: 'codeRequestsPerIp', scope: 'login' } }
// A scope gives a route its own bucket of a shared budget's size (login codes and email
// OTPs are counted apart). The point is taken after the request was validated and before
// the handler runs, so a malformed request costs nothing and a burst gets no more than the
// budget. Budgets per account (sign-in failures) are the SignInGuard's, per admin the auth
// plugin's.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import type { LimitName } from '../lib/ratelimit.ts'

export type RouteRateLimit = LimitName | { budget: LimitName; scope: string }

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit
  }
}

export function installRateLimits(app: FastifyInstance, deps: Pick<Deps, 'limits'>): void {
  // Only the routes that declare a budget get the hook; the others pay nothing for it.
  app.addHook('onRoute', (route) => {
    const declared = route.config?.rateLimit
    if (!declared) return
    const { budget, scope } = typeof declared === 'string' ? { budget: declared } : declared
    const take = async (request: FastifyRequest) => {
      await deps.limits.hit(budget, scope ? `${scope}:${request.clientIp}` : request.clientIp)
    }
    const own = route.preHandler
    route.preHandler = own === undefined ? [take] : [take, ...(Array.isArray(own) ? own : [own])]
  })
}
