// The pages speak to the service the way any client does: through the SDK's typed client,
// over the JSON API, so every rule, limit and audit row of the API applies to the pages
// unchanged. The calls stay in the process (Fastify's inject, no socket) and carry the
// browser's address and User-Agent, so budgets and session records see the person, not
// the page server. A sign-in made for an OpenID application names it to the API with
// headers only this process can make believable (lib/served-client.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Client, createClient, type FetchLike } from '../../sdk/src/client.ts'
import { AuthServiceError } from '../../sdk/src/errors.ts'
import { servedClientHeaders } from '../lib/served-client.ts'

export { AuthServiceError }

function injectFetch(
  app: FastifyInstance,
  request: FastifyRequest,
  servedClientId: string | undefined,
  locale: string | undefined,
): FetchLike {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input.toString())
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const agent = request.headers['user-agent']
    if (agent) headers['user-agent'] = agent
    // The page's own locale (CONTRACT §20): the language of a mail the call sends to
    // someone without a `locale` of their own.
    if (locale) headers['accept-language'] = locale
    if (servedClientId) Object.assign(headers, servedClientHeaders(servedClientId))
    const res = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: url.pathname + url.search,
      headers,
      payload: typeof init?.body === 'string' ? init.body : undefined,
      remoteAddress: request.clientIp || request.ip,
    })
    const out = new Headers()
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue
      for (const v of Array.isArray(value) ? value : [value]) out.append(name, String(v))
    }
    const status = res.statusCode
    const body = status === 204 || status === 304 ? null : new Uint8Array(res.rawPayload)
    return new Response(body, { status, headers: out })
  }
}

/**
 * The API client of one page request, acting with `token` when given; `servedClientId` is
 * the OpenID application the browser is signing in for (session.ts, rememberInteraction).
 */
export function apiFor(
  app: FastifyInstance,
  request: FastifyRequest,
  slug: string,
  token?: string,
  servedClientId?: string,
  locale?: string,
): Client {
  return createClient({
    baseUrl: 'http://pages.internal',
    tenant: slug,
    fetch: injectFetch(app, request, servedClientId, locale),
    token,
  })
}
