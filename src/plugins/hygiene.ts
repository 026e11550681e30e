// Input hygiene (CONTRACT §8): one rule for every string the service reads. PostgreSQL
// cannot store U+0000 in text, and a lone UTF-16 surrogate has no UTF-8 form, so either
// would reach the database as an error (a 500). They are refused here with 400
// `validation`, before any handler, store or query sees them: path parameters, the query
// string and the User-Agent in onRequest (after tenant resolution, which refuses a
// malformed slug itself without a lookup), the parsed JSON body in preValidation.
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

/**
 * The path (`body.tenant.name`) of the first unsafe string in a parsed value, keys
 * included, or undefined when there is none.
 */
export function findUnsafeString(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return isUnsafeString(value) ? path : undefined
  if (value === null || typeof value !== 'object') return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeString(value[i], `${path}.${i}`)
      if (found) return found
    }
    return undefined
  }
  for (const [key, item] of Object.entries(value)) {
    if (isUnsafeString(key)) return path
    const found = findUnsafeString(item, `${path}.${key}`)
    if (found) return found
  }
  return undefined
}

function refuse(path: string): never {
  throw new AppError('validation', {
    details: {
      issues: [{ path, message: 'must not contain NUL or unpaired surrogate characters' }],
    },
  })
}

export function clientIp(request: FastifyRequest): string {
  const ip = request.ip
  if (ip && isIP(ip) !== 0) return ip
  return request.socket.remoteAddress ?? ''
}

export function installInputHygiene(app: FastifyInstance): void {
  app.decorateRequest('clientIp', '')
  app.addHook('onRequest', async (request) => {
    request.clientIp = clientIp(request)
    const { tenantSlug: _slug, ...params } = (request.params ?? {}) as Record<string, unknown>
    const bad =
      findUnsafeString(params, 'params') ??
      findUnsafeString(request.query, 'querystring') ??
      findUnsafeString(request.headers['user-agent'], 'headers.user-agent')
    if (bad) refuse(bad)
  })
  app.addHook('preValidation', async (request) => {
    const bad = findUnsafeString(request.body, 'body')
    if (bad) refuse(bad)
  })
}
