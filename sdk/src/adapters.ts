// Middleware for Fastify, Express and Hono around verifyAccessToken: read the bearer
// token, verify it, expose the claims as `auth`, or answer 401 with the service's error
// envelope. Typed structurally: none of the frameworks is imported at run time.
import { AuthServiceError } from './errors.ts'
import { type AccessTokenClaims, type VerifyOptions, verifyAccessToken } from './verify.ts'

type HeaderValue = string | string[] | undefined

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function bearerToken(header: HeaderValue): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '')
  return match?.[1]
}

/** The claims of the request's bearer token; AuthServiceError 401 when missing or refused. */
export async function authenticate(
  authorization: HeaderValue,
  options: VerifyOptions,
): Promise<AccessTokenClaims> {
  const token = bearerToken(authorization)
  if (!token) {
    throw new AuthServiceError({
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'Missing bearer token.',
      details: { reason: 'token_invalid' },
    })
  }
  return verifyAccessToken(token, options)
}

/** A refusal as status and envelope; an unexpected failure (JWKS unreachable) is a 503. */
function refusal(error: unknown): { status: number; body: unknown } {
  if (error instanceof AuthServiceError && error.status < 500) {
    return { status: error.status, body: error.toJSON() }
  }
  return {
    status: 503,
    body: { code: 'UNAVAILABLE', message: 'Cannot verify the access token now.' },
  }
}

export interface FastifyLikeRequest {
  headers: Record<string, HeaderValue>
  auth?: AccessTokenClaims
}
export interface FastifyLikeReply {
  code(status: number): { send(payload?: unknown): unknown }
}

/**
 * A Fastify preHandler: `app.get('/x', { preHandler: fastifyAuth(opts) }, …)` or
 * `app.addHook('preHandler', fastifyAuth(opts))`. Sets `request.auth`.
 */
export function fastifyAuth(options: VerifyOptions) {
  return async (request: FastifyLikeRequest, reply: FastifyLikeReply): Promise<unknown> => {
    try {
      request.auth = await authenticate(request.headers.authorization, options)
      return undefined
    } catch (error) {
      const { status, body } = refusal(error)
      return reply.code(status).send(body)
    }
  }
}

export interface ExpressLikeRequest {
  headers: Record<string, HeaderValue>
  auth?: AccessTokenClaims
}
export interface ExpressLikeResponse {
  status(code: number): { json(body: unknown): unknown }
}

/** Express middleware: `app.use(expressAuth(opts))`. Sets `req.auth`. */
export function expressAuth(options: VerifyOptions) {
  return (req: ExpressLikeRequest, res: ExpressLikeResponse, next: (error?: unknown) => void) => {
    authenticate(req.headers.authorization, options).then(
      (claims) => {
        req.auth = claims
        next()
      },
      (error: unknown) => {
        const { status, body } = refusal(error)
        res.status(status).json(body)
      },
    )
  }
}

export interface HonoLikeContext {
  req: { header(name: string): string | undefined }
  set(key: 'auth', value: AccessTokenClaims): void
  json(body: unknown, status: 401 | 403 | 503): Response
}

/**
 * Hono middleware: `app.use('/api/*', honoAuth(opts))`, then `c.get('auth')`
 * (declare `Variables: { auth: AccessTokenClaims }` in the app's Env).
 */
export function honoAuth(options: VerifyOptions) {
  return async (c: HonoLikeContext, next: () => Promise<void>): Promise<Response | undefined> => {
    let claims: AccessTokenClaims
    try {
      claims = await authenticate(c.req.header('authorization'), options)
    } catch (error) {
      const { status, body } = refusal(error)
      return c.json(body, status as 401 | 403 | 503)
    }
    c.set('auth', claims)
    await next()
    return undefined
  }
}
