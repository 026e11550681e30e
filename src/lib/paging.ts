// Keyset paging of the admin lists (CONTRACT §2, Lists), written once: read one row more
// than the page, and the extra row says whether a next page exists. The cursor names the
// page's last row (lib/cursor.ts).
import { decodeCursor, encodeCursor } from './cursor.ts'

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/**
 * Reads `limit + 1` rows after the row `cursor` names (through `read`), and answers the
 * first `limit`, presented, with the cursor of the next page when there is one.
 */
export async function readPage<Row extends { id: string }, Item>(
  query: { limit: number; cursor?: string },
  read: (window: { limit: number; after: string | undefined }) => Promise<Row[]>,
  present: (row: Row) => Item,
): Promise<Page<Item>> {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor)
  const rows = await read({ limit: query.limit + 1, after })
  const page = rows.slice(0, query.limit)
  const last = page.at(-1)
  return {
    items: page.map(present),
    nextCursor: rows.length > query.limit && last ? encodeCursor(last.id) : null,
  }
}
