// What every answer of the fuzz suite must satisfy, whatever was sent (CONTRACT §3):
// never a 5xx; a status the operation documents, or one any request may earn; every
// error in the envelope `{ code, message, details: { reason } }` with the code its status
// implies, JSON, no stack trace, and Retry-After on a 429.
import { CODES } from '../envelope.ts'
import type { Operation } from './request.ts'
import type { WireResponse } from './wire.ts'

/**
 * Answers any request may earn whatever route it is for, so an operation need not list
 * them: a request that cannot be read (a bad URL, query, header or body: 400), a path
 * that names no route or no tenant (404), headers over 16 KiB (431, CONTRACT §8). 401,
 * 403, 409 and 429 are not among them: an operation answers them only when documented.
 */
const ANY_ROUTE: Record<number, (reason: unknown) => boolean> = {
  400: () => true,
  404: (reason) => reason === 'route_not_found' || reason === 'tenant_not_found',
  431: () => true,
}

export interface Verdict {
  problems: string[]
  reason?: string
}

export function judge(op: Operation, res: WireResponse): Verdict {
  const problems: string[] = []
  const text = res.body.toString('utf8')
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const reason: unknown = body?.details?.reason
  if (res.status >= 500) problems.push(`server error ${res.status}`)
  if (!op.statuses.includes(res.status) && !ANY_ROUTE[res.status]?.(reason)) {
    problems.push(`undocumented status ${res.status} (documented: ${op.statuses.join(', ')})`)
  }
  if (res.status >= 400) problems.push(...envelope(res, body))
  return { problems, reason: typeof reason === 'string' ? reason : undefined }
}

function envelope(res: WireResponse, body: any): string[] {
  const problems: string[] = []
  if (!/^application\/json/.test(res.headers.get('content-type') ?? '')) {
    problems.push(`error content-type ${JSON.stringify(res.headers.get('content-type'))}`)
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return [...problems, 'error body is not a JSON object']
  }
  const extra = Object.keys(body).filter((k) => !['code', 'message', 'details'].includes(k))
  if (extra.length > 0) problems.push(`envelope has extra keys ${extra.join(', ')}`)
  if (body.code !== CODES[res.status]) {
    problems.push(`code ${JSON.stringify(body.code)} for status ${res.status}`)
  }
  if (typeof body.message !== 'string' || body.message.length === 0) {
    problems.push('message is not a non-empty string')
  }
  if (typeof body.details?.reason !== 'string') problems.push('details.reason is not a string')
  if (/\bat .+\.[jt]s:\d+|node_modules/.test(JSON.stringify(body))) problems.push('stack trace')
  if (res.status === 429) {
    const retryAfter = Number(res.headers.get('retry-after'))
    if (!Number.isInteger(retryAfter) || retryAfter < 1) problems.push('429 without Retry-After')
  }
  return problems
}
