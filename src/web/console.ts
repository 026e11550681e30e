// The admin console's files (console/, built by `npm run build` into console/dist) at
// /console/: the app's index for every path under it (it routes itself), the hashed
// assets with a long cache. Read from disk once, at the first request; when the console
// was not built, a page says how to build it instead.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { extname } from 'node:path'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { openerPolicy } from './http.ts'

const DIST = new URL('../../console/dist/', import.meta.url)

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
}

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')

interface Built {
  index: Buffer
  assets: Map<string, Buffer>
}

let built: Built | undefined

/** The built files, read once; undefined (and looked for again next time) when not built. */
function load(): Built | undefined {
  if (built) return built
  const indexFile = new URL('index.html', DIST)
  if (!existsSync(indexFile)) return undefined
  const assets = new Map<string, Buffer>()
  const dir = new URL('assets/', DIST)
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)) assets.set(name, readFileSync(new URL(name, dir)))
  }
  built = { index: readFileSync(indexFile), assets }
  return built
}

function headers(reply: FastifyReply): FastifyReply {
  return (
    reply
      .header('content-security-policy', CONSOLE_CSP)
      .header('x-frame-options', 'DENY')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      // No authorization passes through the console (web/http.ts, openerPolicy).
      .header('cross-origin-opener-policy', openerPolicy({ authorization: false }))
  )
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const index = async (_request: unknown, reply: FastifyReply) => {
    const files = load()
    headers(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8')
    if (!files) {
      return reply
        .code(503)
        .send(
          '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head><body><main><h1>The console is not built</h1><p>Run <code>npm run build</code>; the service picks it up at the next request.</p></main></body></html>',
        )
    }
    return reply.send(files.index)
  }
  app.get('/console', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect('/console/', 301),
  )
  app.get('/console/', { schema: { hide: true } }, index)
  app.get<{ Params: { name: string } }>(
    '/console/assets/:name',
    { schema: { hide: true } },
    async (request, reply) => {
      const body = load()?.assets.get(request.params.name)
      const type = TYPES[extname(request.params.name)]
      if (!body || !type) return headers(reply).code(404).type('text/plain').send('Not found')
      return headers(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(type)
        .send(body)
    },
  )
  app.get('/console/*', { schema: { hide: true } }, index)
}
