// 405 for a method a path does not have (RFC 9110 §15.5.6, issue 19): Fastify routes by
// method first and hands every miss to the not-found handler, so `TRACE` or `PUT` on a
// POST route used to answer 404 `route_not_found`, and `QUERY` without a content type 400.
// Every route is recorded here as it is registered (onRoute); a request that found no
// route is matched against the record by path alone, in onRequest, before a body is read:
// a path some method has answers 405 `method_not_allowed` with `Allow` listing them, an
// unknown path stays 404 `route_not_found`. The API answers with the envelope (src/plugins/errors.ts), the
// hosted pages with an HTML page (their own error handler, src/web/routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { AppError } from '../lib/errors.ts'
import { resolveTenant } from './tenant.ts'

interface Route {
  /** The pattern's segments after the leading '/': static text, `:name` or a final `*`. */
  segments: string[]
  methods: Set<string>
}

/** The methods of the routes registered so far, by route pattern. */
export class RouteTable {
  private readonly routes = new Map<string, Route>()

  add(url: string, method: string | string[]): void {
    let route = this.routes.get(url)
    if (!route) {
      route = { segments: url.split('/').slice(1), methods: new Set() }
      this.routes.set(url, route)
    }
    for (const m of Array.isArray(method) ? method : [method]) route.methods.add(m)
  }

  /**
   * The methods routed for this path (HEAD wherever GET is: Fastify answers it), sorted,
   * and the path parameters of a route that has them; no methods when nothing matches.
   */
  match(path: string): { methods: string[]; params: Record<string, string> } {
    const segments = path.split('/').slice(1).map(decodeSegment)
    const methods = new Set<string>()
    let params: Record<string, string> = {}
    for (const route of this.routes.values()) {
      const found = matchSegments(route.segments, segments)
      if (!found) continue
      for (const m of route.methods) methods.add(m)
      params = { ...found, ...params }
    }
    if (methods.has('GET')) methods.add('HEAD')
    return { methods: [...methods].sort(), params }
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** find-my-way's rules, as this service uses them: static, `:param` (not empty), final `*`. */
function matchSegments(pattern: string[], path: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i]
    if (part === '*' && i === pattern.length - 1) return params
    if (i >= path.length) return undefined
    if (part.startsWith(':')) {
      if (path[i] === '') return undefined
      params[part.slice(1)] = path[i]
    } else if (part !== path[i]) return undefined
  }
  return pattern.length === path.length ? params : undefined
}

/**
 * Records every route and answers 405 for the requests that found none; call before any
 * route is registered. A tenant path of an unknown slug stays a 404 `tenant_not_found`
 * whatever the method (CONTRACT §3: an unknown slug answers 404 before anything else).
 */
export function installMethodNotAllowed(app: FastifyInstance, deps: Pick<Deps, 'tenants'>): void {
  const table = new RouteTable()
  app.addHook('onRoute', (route) => table.add(route.url, route.method))
  app.addHook('onRequest', (request: FastifyRequest, reply, done) => {
    if (!request.is404) return done()
    const { methods, params } = table.match(request.url.split('?', 1)[0])
    if (methods.length === 0) {
      // An unknown API path is a 404 before its body is read (a QUERY without a content
      // type would be Fastify's 400); the pages' own not-found route (it has the tenant's
      // slug) goes on to tenant resolution and its 404 page.
      const pages = (request.params as { tenantSlug?: string } | undefined)?.tenantSlug
      return done(pages === undefined ? new AppError('route_not_found') : undefined)
    }
    const refuse = () => {
      reply.header('allow', methods.join(', '))
      done(new AppError('method_not_allowed'))
    }
    if (params.tenantSlug === undefined) return refuse()
    resolveTenant(deps, params.tenantSlug).then((tenant) => {
      // The pages draw their error page with the tenant's name and logo.
      request.tenant = tenant
      refuse()
    }, done)
  })
}
