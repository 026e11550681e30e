// One error type for every failure the service reports (CONTRACT §3): the envelope
// `{ code, message, details }` with `details.reason` from the service's catalogue
// (src/lib/errors.ts), the HTTP status, and `Retry-After` on a 429.

/** The fields of an error answered by the service, or raised by the SDK's verifier. */
export interface AuthServiceErrorInit {
  status: number
  code: string
  message: string
  details?: Record<string, unknown>
  retryAfter?: number
}

export class AuthServiceError extends Error {
  /** The HTTP status (401, 403, 429, …). */
  readonly status: number
  /** The envelope's `code`, which follows the status: `UNAUTHORIZED`, `TOO_MANY_REQUESTS`, … */
  readonly code: string
  /** `details.reason`, the machine-readable cause: `invalid_credentials`, `token_expired`, … */
  readonly reason: string | undefined
  /** The envelope's `details` (validation errors carry `issues: [{ path, message }]`). */
  readonly details: Record<string, unknown> | undefined
  /** Seconds to wait, from the `Retry-After` header of a 429. */
  readonly retryAfter: number | undefined

  constructor(init: AuthServiceErrorInit) {
    super(init.message)
    this.name = 'AuthServiceError'
    this.status = init.status
    this.code = init.code
    this.details = init.details
    const reason = init.details?.reason
    this.reason = typeof reason === 'string' ? reason : undefined
    this.retryAfter = init.retryAfter
  }

  /** The error a non-2xx response stands for; a body that is not the envelope keeps the status. */
  static async fromResponse(res: Response): Promise<AuthServiceError> {
    let body: unknown
    try {
      body = await res.json()
    } catch {
      body = undefined
    }
    const envelope = (body ?? {}) as { code?: unknown; message?: unknown; details?: unknown }
    const seconds = Number(res.headers.get('retry-after'))
    return new AuthServiceError({
      status: res.status,
      code: typeof envelope.code === 'string' ? envelope.code : `HTTP_${res.status}`,
      message:
        typeof envelope.message === 'string'
          ? envelope.message
          : `HTTP ${res.status} ${res.statusText}`,
      details:
        envelope.details && typeof envelope.details === 'object'
          ? (envelope.details as Record<string, unknown>)
          : undefined,
      retryAfter: res.headers.has('retry-after') && Number.isFinite(seconds) ? seconds : undefined,
    })
  }

  /** The envelope, as the service would answer it (the adapters send this). */
  toJSON(): { code: string; message: string; details?: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details }
  }
}
