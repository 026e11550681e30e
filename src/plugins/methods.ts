// 405 for a method a path does not have (RFC 9110 §15.5.6, issue 19): Fastify routes by
// method first and hands every miss to the not-found handler, so `TRACE` or `PUT` on a
// POST route used to answer 404 `route_not_found`, and `QUERY` without a content type 400.
// Every route is recorded here as it is registered (onRoute); a request that found no
// route is matched against the record by path alone, in onRequest, before a body is read:
// a path some method has answers 405 `method_not_allowed` with `Allow` listing them, an
// unknown path stays 404 `route_not_found`. A path is its most specific pattern, as in
// OpenAPI: a request find-my-way hands on to a templated route because the concrete one
// lacks its method (`PATCH users/import` to `users/:userId`) is that concrete path's 405,
// answered before authentication, and Allow lists that pattern's methods only. The API
// answers with the envelope (src/plugins/errors.ts), the hosted pages with an HTML page
// (their own error handler, src/web/routes.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../deps.ts'
import { AppError } from '../lib/errors.ts'
import { resolveTenant } from './tenant.ts'

interface Route {
  /** The pattern's segments after the leading '/': static text, `:name` or a final `*`. */
  segments: string[]
  methods: Set<string>
}

/** A segment's rank in find-my-way's precedence: static, then `:param`, then `*`. */
function rank(segment: string | undefined): number {
  if (segment === undefined) return 3
  if (segment === '*') return 2
  return segment.startsWith(':') ? 1 : 0
}

/**
 * Which of two patterns matching one path is the more specific (negative: `a`): at the
 * first segment where their kinds differ, static before parameter before wildcard. It is
 * find-my-way's order and OpenAPI's ("concrete paths are matched before their templated
 * counterparts"): `/users/import` is its own path beside `/users/{userId}`.
 */
function precedence(a: string[], b: string[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = rank(a[i]) - rank(b[i])
    if (d !== 0) return d
    if (a[i] === '*') return 0
  }
  return 0
}

/** Whether some path could match both patterns (static segments that differ rule it out). */
function overlap(a: string[], b: string[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === '*' || b[i] === '*') return true
    if (a[i] === undefined || b[i] === undefined) return false
    if (rank(a[i]) === 0 && rank(b[i]) === 0 && a[i] !== b[i]) return false
  }
  return true
}

/** The methods of the routes registered so far, by route pattern. */
export class RouteTable {
  private readonly routes = new Map<string, Route>()
  /** Per parametric pattern: whether a more specific pattern could take some of its paths. */
  private readonly shadowed = new Map<string, boolean>()

  add(url: string, method: string | string[]): void {
    let route = this.routes.get(url)
    if (!route) {
      route = { segments: url.split('/').slice(1), methods: new Set() }
      this.routes.set(url, route)
    }
    for (const m of Array.isArray(method) ? method : [method]) route.methods.add(m)
    this.shadowed.clear()
  }

  /**
   * The methods of the most specific pattern matching this path (HEAD wherever GET is:
   * Fastify answers it), sorted, the path parameters it names, and its segments; no
   * methods when nothing matches. Only the most specific pattern's methods are the path's:
   * find-my-way would hand `PATCH /users/import` to `/users/:userId`, which is another path.
   */
  match(path: string): { methods: string[]; params: Record<string, string>; best?: string[] } {
    const segments = path.split('/').slice(1).map(decodeSegment)
    let best: { route: Route; params: Record<string, string> }[] = []
    for (const route of this.routes.values()) {
      const found = matchSegments(route.segments, segments)
      if (!found) continue
      const order = best.length === 0 ? -1 : precedence(route.segments, best[0].route.segments)
      if (order < 0) best = [{ route, params: found }]
      else if (order === 0) best.push({ route, params: found })
    }
    const methods = new Set<string>()
    for (const { route } of best) for (const m of route.methods) methods.add(m)
    if (methods.has('GET')) methods.add('HEAD')
    return {
      methods: [...methods].sort(),
      params: best[0]?.params ?? {},
      best: best[0]?.route.segments,
    }
  }

  /**
   * Whether a request find-my-way routed to `url` belongs to a more specific pattern that
   * lacks its method (then the answer is that pattern's 405). Wildcard mounts (the OpenID
   * provider, the console's files) route as they always did.
   */
  routedPastItsPath(url: string, path: string): ReturnType<RouteTable['match']> | undefined {
    const own = this.routes.get(url)?.segments
    if (!own) return undefined
    let shadowed = this.shadowed.get(url)
    if (shadowed === undefined) {
      shadowed =
        own.some((s) => rank(s) === 1) &&
        !own.includes('*') &&
        [...this.routes.values()].some(
          (r) => overlap(r.segments, own) && precedence(r.segments, own) < 0,
        )
      this.shadowed.set(url, shadowed)
    }
    if (!shadowed) return undefined
    const found = this.match(path)
    return found.best && precedence(found.best, own) < 0 ? found : undefined
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
    const path = request.url.split('?', 1)[0]
    const found = request.is404
      ? table.match(path)
      : table.routedPastItsPath(request.routeOptions.url ?? '', path)
    if (!found) return done()
    const { methods, params } = found
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
