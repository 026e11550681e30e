// SCIM's error schema (RFC 7644 §3.12): every failure under /scim/v2/ leaves as
// `{ schemas: [Error URN], status: "400", scimType?, detail }`, status as a string, with
// the scimType RFC 7644 names for the case. The service's own errors (AppError: 401s from
// the auth plugin, the unknown tenant's 404, 429s, hygiene's 400s) are translated here, so
// a SCIM client never meets the /v1 envelope (CONTRACT §14).
import type { FastifyReply } from 'fastify'
import type { AppError } from '../../lib/errors.ts'

export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'
/** Where SCIM is mounted (CONTRACT §14): `{PUBLIC_URL}/scim/v2/{tenantSlug}/`. */
export const SCIM_PREFIX = '/scim/v2'
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8'

/** RFC 7644 §3.12, table 9: the scimType values this service answers. */
export type ScimType =
  | 'invalidFilter'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'invalidValue'
  | 'mutability'
  | 'noTarget'
  | 'uniqueness'

export class ScimError extends Error {
  readonly status: number
  readonly scimType: ScimType | undefined
  readonly retryAfter: number | undefined

  constructor(
    status: number,
    detail: string,
    options: { scimType?: ScimType; retryAfter?: number } = {},
  ) {
    super(detail)
    this.status = status
    this.scimType = options.scimType
    this.retryAfter = options.retryAfter
  }

  toBody(): ScimErrorBody {
    return {
      schemas: [ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.message,
    }
  }
}

export interface ScimErrorBody {
  schemas: string[]
  status: string
  scimType?: string
  detail: string
}

export const invalidFilter = (detail: string) =>
  new ScimError(400, detail, { scimType: 'invalidFilter' })
export const invalidPath = (detail: string) =>
  new ScimError(400, detail, { scimType: 'invalidPath' })
export const invalidValue = (detail: string) =>
  new ScimError(400, detail, { scimType: 'invalidValue' })
export const invalidSyntax = (detail: string) =>
  new ScimError(400, detail, { scimType: 'invalidSyntax' })
export const mutability = (detail: string) => new ScimError(400, detail, { scimType: 'mutability' })
export const noTarget = (detail: string) => new ScimError(400, detail, { scimType: 'noTarget' })
export const uniqueness = (detail: string) => new ScimError(409, detail, { scimType: 'uniqueness' })
export const notFound = (detail = 'No such resource.') => new ScimError(404, detail)

/** The scimType of the service's own 400 reasons (body or query it could not take). */
const SCIM_TYPES: Partial<Record<AppError['reason'], ScimType>> = {
  validation: 'invalidValue',
  password_too_weak: 'invalidValue',
  malformed_json: 'invalidSyntax',
  unsupported_media_type: 'invalidSyntax',
  body_too_large: 'invalidSyntax',
}

/** An AppError (any reason of the catalogue) in SCIM's schema, with the same status. */
export function fromAppError(error: AppError): ScimError {
  return new ScimError(error.status, error.message, {
    scimType: SCIM_TYPES[error.reason],
    retryAfter: error.retryAfter,
  })
}

export function sendScimError(reply: FastifyReply, error: ScimError): FastifyReply {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter))
  return reply.status(error.status).type(SCIM_CONTENT_TYPE).send(error.toBody())
}
