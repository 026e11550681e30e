// The one error handler: every failure leaves as the envelope of CONTRACT §3, including
// Fastify's own (malformed JSON, wrong content type, oversized body, unknown route).
// Messages are shown only below 500; the cause of a 500 goes to the log, never the client.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { databaseFailure, isDatabaseUnavailable } from '../db/errors.ts'
import { AppError, CODE_BY_STATUS, type Reason } from '../lib/errors.ts'
import { fromAppError, SCIM_PREFIX, sendScimError } from '../modules/scim/errors.ts'

interface ValidationIssue {
  path: string
  message: string
}

// Fastify's error codes for requests it could not read, mapped onto our catalogue.
const FASTIFY_REASONS: Record<string, Reason> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) =>
    sendAppError(reply, toAppError(error, request)),
  )

  app.setNotFoundHandler((_request, reply) => sendAppError(reply, new AppError('route_not_found')))
}

/**
 * Any failure as an AppError of the catalogue: ours as they are, Fastify's own (validation,
 * unreadable bodies) mapped onto their reasons, anything else logged and answered as a 500
 * (or a 503 while the database is away). The SCIM routes send the same errors in their own
 * schema (modules/scim/errors.ts).
 */
export function toAppError(error: FastifyError | AppError, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error
  if (error.validation) {
    const issues: ValidationIssue[] = error.validation.map((v) =>
      // The bodies' one `not` rule (src/schemas.ts, NotBothTotpAndRecoveryCode): said in
      // words, at the field, rather than Ajv's "must NOT be valid" at the body.
      v.keyword === 'not'
        ? {
            path: issuePath(error.validationContext, `${v.instancePath}/recoveryCode`, {}),
            message: 'must not be given with totpCode',
          }
        : {
            path: issuePath(error.validationContext, v.instancePath, v.params),
            message: v.message ?? 'is not valid',
          },
    )
    return new AppError('validation', { details: { issues } })
  }
  const reason = error.code ? FASTIFY_REASONS[error.code] : undefined
  if (reason) return new AppError(reason)
  // JSON.parse failures surface as SyntaxError with a 400 status.
  if (error instanceof SyntaxError || (error.statusCode === 400 && !error.code)) {
    return new AppError('malformed_json')
  }
  if (error.statusCode === 429) return new AppError('rate_limited')
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new AppError('validation', { message: 'The request is not valid.' })
  }
  // The database is down or restarting: the request may succeed later, so it is a 503,
  // not a fault of ours (the pool's connect timeout bounds how long this takes).
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ db: databaseFailure(error) }, 'database unavailable')
    return new AppError('unavailable')
  }
  request.log.error({ err: error }, 'unhandled error')
  return new AppError('internal')
}

/**
 * Errors the router raises before any route or hook runs (Fastify's `frameworkErrors`),
 * which would otherwise leave in Fastify's own shape. A path parameter too long to route
 * names nothing that exists: a tenant slug (at most 63 characters) is an unknown tenant
 * (CONTRACT §3), anything else an unknown route. A URL that cannot be decoded is a 400.
 */
export function frameworkErrors(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  // Under /scim/v2/ every answer is in SCIM's error schema (CONTRACT §14).
  const send = (appError: AppError) =>
    (request.raw.url ?? '').startsWith(`${SCIM_PREFIX}/`)
      ? sendScimError(reply, fromAppError(appError))
      : sendAppError(reply, appError)
  if (error.code === 'FST_ERR_BAD_URL') {
    return send(new AppError('validation', { message: 'The URL is not valid.' }))
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const tenantSegment = /^\/(?:v1|scim\/v2)\/([^/?]*)/.exec(request.raw.url ?? '')?.[1] ?? ''
    const reason = tenantSegment.length > 63 ? 'tenant_not_found' : 'route_not_found'
    return send(new AppError(reason))
  }
  request.log.error({ err: error }, 'router error')
  return send(new AppError('internal'))
}

/**
 * Errors Node's HTTP parser raises before Fastify sees a request (server 'clientError'):
 * the request timeout (408), headers over the limit (431) and malformed HTTP (400), each
 * answered with the envelope while nothing of a response has been written yet.
 */
export function clientErrorHandler(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const appError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new AppError('request_timeout')
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? new AppError('headers_too_large')
        : new AppError('validation', { message: 'The request is not valid HTTP.' })
  this.log.debug({ code: error.code }, 'client error')
  const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (socket.writable && !response?.headersSent) {
    const body = JSON.stringify(appError.toBody())
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    )
  }
  socket.destroy(error)
}

export function sendAppError(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
  return reply.status(error.status).type('application/json; charset=utf-8').send(error.toBody())
}

/** A path such as `body.admin.email` that a client can map back onto its form. */
function issuePath(context: string | undefined, instancePath: string, params: unknown): string {
  const parts = instancePath.split('/').filter(Boolean)
  const missing = (params as { missingProperty?: string } | undefined)?.missingProperty
  if (missing) parts.push(missing)
  return [context ?? 'body', ...parts].join('.')
}

/** The error envelope as a TypeBox-free JSON schema, shared by every route's responses. */
export const errorEnvelopeSchema = {
  $id: 'ErrorEnvelope',
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', enum: Object.values(CODE_BY_STATUS) },
    message: { type: 'string' },
    details: {
      type: 'object',
      additionalProperties: true,
      properties: {
        reason: { type: 'string' },
        methods: { type: 'array', items: { type: 'string' } },
        issues: {
          type: 'array',
          items: {
            type: 'object',
            properties: { path: { type: 'string' }, message: { type: 'string' } },
          },
        },
      },
    },
  },
} as const

export type { FastifyRequest }
