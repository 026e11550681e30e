// Opaque list cursors (CONTRACT §2, Lists). A cursor names the last row of a page by id
// only; the query reads that row's sort key inside the next query, so a cursor carries no
// timestamp whose precision could drift between the database and JavaScript.
import { AppError } from './errors.ts'
import { isUuid } from './ids.ts'

const VERSION = 'c1'

export function encodeCursor(id: string): string {
  return Buffer.from(`${VERSION}:${id}`, 'utf8').toString('base64url')
}

/** The row id a cursor names; anything else is a 400 on `querystring.cursor`. */
export function decodeCursor(cursor: string): string {
  const [version, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':')
  if (version === VERSION && id !== undefined && isUuid(id)) return id.toLowerCase()
  throw new AppError('validation', {
    details: { issues: [{ path: 'querystring.cursor', message: 'is not a cursor of this list' }] },
  })
}
