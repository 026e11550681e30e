// Input hygiene (CONTRACT §8): one rule for every string the service reads. PostgreSQL
// cannot store U+0000 in text, and a lone UTF-16 surrogate has no UTF-8 form, so either
// would reach the database as an error (a 500). They are refused here with 400
// `validation`, before any handler or query sees them: path parameters, the query
// string and the User-Agent in onRequest (after tenant resolution, which refuses a
// malformed slug itself without a lookup), the parsed JSON body in preValidation. A body
// nested deeper than any of ours is refused by the same walk, which never recurses.
// A query string whose percent-escapes are not UTF-8 (`%FF`, a cut sequence `%E0%A4`, a
// `%` without two hex digits) is refused with it (CONTRACT §16): the query parser would
// otherwise keep such escapes as they were, or turn them into U+FFFD, without a word.
//
// The client address is settled here too: under TRUST_PROXY the address a proxy put in
// X-Forwarded-For is used only when it is an IP address; otherwise the socket's.
import { isIP } from 'node:net'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { AppError } from '../lib/errors.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The client address rate limits and the audit log key on (never a non-IP string). */
    clientIp: string
  }
}

/** Whether a string holds a character the service refuses (NUL, a lone surrogate). */
export function isUnsafeString(value: string): boolean {
  return value.includes('\u0000') || !value.isWellFormed()
}

/** No body of this API nests deeper than a few levels; 32 leaves room and bounds the walk. */
export const MAX_DEPTH = 32

/**
 * The path (`body.tenant.name`) of the first unsafe string in a parsed value, keys
 * included, or of the first value nested deeper than MAX_DEPTH; undefined when there is
 * none. Iterative, so no input can exhaust the stack.
 */
export function findUnsafeString(value: unknown, path: string): Issue | undefined {
  const pending: [unknown, string, number][] = [[value, path, 0]]
  while (pending.length > 0) {
    const [item, at, depth] = pending.pop() as [unknown, string, number]
    if (typeof item === 'string') {
      if (isUnsafeString(item)) return { path: at, message: UNSAFE }
      continue
    }
    if (item === null || typeof item !== 'object') continue
    if (depth >= MAX_DEPTH)
      return { path: at, message: `must not nest deeper than ${MAX_DEPTH} levels` }
    const entries = Array.isArray(item) ? item.entries() : Object.entries(item)
    const children: [unknown, string, number][] = []
    for (const [key, child] of entries) {
      if (typeof key === 'string' && isUnsafeString(key)) return { path: at, message: UNSAFE }
      children.push([child, `${at}.${key}`, depth + 1])
    }
    // Reversed onto the stack, so the first unsafe string in document order is found.
    for (let i = children.length - 1; i >= 0; i--) pending.push(children[i])
  }
  return undefined
}

interface Issue {
  path: string
  message: string
}

const UNSAFE = 'must not contain NUL or unpaired surrogate characters'

function refuse(issue: Issue): never {
  throw new AppError('validation', { details: { issues: [issue] } })
}

/** Whether the URL's query string holds an escape that does not decode as UTF-8. */
/**
 * The issue of a query string whose escapes are not UTF-8 percent-encoding (CONTRACT §16),
 * naming the parameter that holds it (`querystring.cursor`) when its name reads, else the
 * query string as a whole; undefined when every escape decodes.
 */
export function badQueryEscape(url: string): Issue | undefined {
  const start = url.indexOf('?')
  if (start === -1 || !url.includes('%', start)) return undefined
  for (const pair of url.slice(start + 1).split('&')) {
    const cut = pair.indexOf('=')
    const name = cut === -1 ? pair : pair.slice(0, cut)
    const value = cut === -1 ? '' : pair.slice(cut + 1)
    const readName = decodes(name)
    if (readName !== undefined && decodes(value) !== undefined) continue
    const path =
      readName === undefined || readName === '' ? 'querystring' : `querystring.${readName}`
    return { path, message: 'must be valid UTF-8 percent-encoding' }
  }
  return undefined
}

function decodes(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '))
  } catch {
    return undefined
  }
}

export function clientIp(request: FastifyRequest): string {
  const ip = request.ip
  if (ip && isIP(ip) !== 0) return ip
  return request.socket.remoteAddress ?? ''
}

export function installInputHygiene(app: FastifyInstance): void {
  app.decorateRequest('clientIp', '')
  app.addHook('onRequest', (request, _reply, done) => {
    request.clientIp = clientIp(request)
    const { tenantSlug: _slug, ...params } = (request.params ?? {}) as Record<string, unknown>
    const bad =
      findUnsafeString(params, 'params') ??
      badQueryEscape(request.url) ??
      findUnsafeString(request.query, 'querystring') ??
      findUnsafeString(request.headers['user-agent'], 'headers.user-agent')
    if (bad) refuse(bad)
    done()
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const bad = request.body === undefined ? undefined : findUnsafeString(request.body, 'body')
    if (bad) refuse(bad)
    done()
  })
}
