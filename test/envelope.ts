// The error envelope of CONTRACT §3, checked the same way by every test.
import assert from 'node:assert/strict'
import type { Response } from './helpers.ts'

/** The code each status carries (CONTRACT §3), as the tests expect it. */
export const CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  429: 'TOO_MANY_REQUESTS',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
}

/**
 * Asserts a failure answered `status` with `{ code, message, details: { reason } }` as
 * JSON, nothing else at the top level (no stack trace), and, for 429, a Retry-After.
 */
export function expectError(res: Response, status: number, reason: string): void {
  const where = `${JSON.stringify(res.body)}`
  assert.equal(res.status, status, where)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, where)
  const body = res.body as Record<string, unknown>
  assert.equal(typeof body, 'object', where)
  assert.deepEqual(
    Object.keys(body)
      .filter((k) => k !== 'details')
      .sort(),
    ['code', 'message'],
    where,
  )
  assert.equal(body.code, CODES[status], where)
  assert.equal(typeof body.message, 'string', where)
  assert.ok((body.message as string).length > 0, where)
  const details = body.details as Record<string, unknown> | undefined
  assert.equal(details?.reason, reason, where)
  assert.doesNotMatch(JSON.stringify(body), /\bat .+\.ts:\d+/, 'no stack trace')
  if (status === 429) {
    const retryAfter = Number(res.headers.get('retry-after'))
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, 'Retry-After in whole seconds')
  }
}

/** A validation failure (400 `validation`) that names `path` among its issues. */
export function expectValidation(res: Response, path?: string): void {
  expectError(res, 400, 'validation')
  const issues = (res.body as { details: { issues?: { path: string; message: string }[] } }).details
    .issues
  assert.ok(Array.isArray(issues) && issues.length > 0, 'validation issues listed')
  for (const issue of issues) {
    assert.equal(typeof issue.path, 'string')
    assert.equal(typeof issue.message, 'string')
  }
  if (path) {
    assert.ok(
      issues.some((i) => i.path === path),
      `expected an issue at ${path}, got ${JSON.stringify(issues)}`,
    )
  }
}
