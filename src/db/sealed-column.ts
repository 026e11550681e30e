// One declaration per field-encrypted column (CONTRACT §1, ENCRYPTION_KEYS): from its
// table, its column and the AAD that binds a value to its row, the seal and open the
// module uses, the compare-and-swap reseal and the `npm run rotate-keys` entry (a batched
// scan across tenants in key order; each row is then rewritten under its own tenant).
// The scan is maintenance that spans tenants on purpose, like db/cross-tenant.ts.
import type { PgColumn } from 'drizzle-orm/pg-core'
import type { FieldCipher } from '../lib/crypto.ts'
import type { SealedColumn as Rotation } from '../lib/rotation.ts'
import type { Handle } from './client.ts'
import {
  and,
  asc,
  eq,
  getTableColumns,
  getTableConfig,
  gt,
  isNotNull,
  type PgTable,
  type SQL,
  sql,
} from './orm.ts'

/** Which row a sealed value belongs to (the tenants table's own rows: tenantId is id). */
export interface SealedKey {
  tenantId: string
  id: string
}

/** A row as the rotation reads it: its key and the stored value. */
export interface SealedRow extends SealedKey {
  sealed: string
}

/** A table keyed by (tenant_id, id), or the tenants table, keyed by id. */
type KeyedTable = PgTable & { id: PgColumn; tenantId?: PgColumn }

export interface SealedColumnOptions {
  /** Names a row in the rotation's report (ids only, never the value). */
  describe: (row: SealedKey) => string
  /** The rows that hold a sealed value; by default those where the column is not null. */
  holds?: SQL
  /** Where the sealed value sits when it is only part of the stored one. */
  within?: {
    get: (stored: string) => string | undefined
    put: (stored: string, sealed: string) => string
  }
}

export interface SealedColumnDeclaration {
  /** `table.column`, as the rotation's report and SEALED_COLUMNS name it. */
  readonly name: string
  seal(cipher: FieldCipher, key: SealedKey, plaintext: string): string
  /** The plaintext, or undefined when no listed key opens it (a retired key). */
  open(cipher: FieldCipher, key: SealedKey, sealed: string): string | undefined
  /** The rotation of every row of every tenant, for `npm run rotate-keys`. */
  rotation(db: Handle, cipher: FieldCipher): Rotation<SealedRow>
}

export function sealedColumn(
  table: KeyedTable,
  column: PgColumn,
  aad: (key: SealedKey) => string,
  options: SealedColumnOptions,
): SealedColumnDeclaration {
  const tenantId = table.tenantId ?? table.id
  const keyed = table.tenantId ? [table.tenantId, table.id] : [table.id]
  const property = Object.entries(getTableColumns(table)).find(([, c]) => c === column)?.[0]
  if (!property) throw new Error(`sealedColumn: ${column.name} is not a column of the table`)
  const name = `${getTableConfig(table).name}.${column.name}`

  const seal = (cipher: FieldCipher, key: SealedKey, plaintext: string) =>
    cipher.encrypt(plaintext, aad(key))
  const open = (cipher: FieldCipher, key: SealedKey, sealed: string) => {
    try {
      return cipher.decrypt(sealed, aad(key))
    } catch {
      return undefined
    }
  }

  /** The next `limit` rows holding a sealed value after `after`, in key order. */
  async function scan(db: Handle, after: SealedKey | undefined, limit: number) {
    const past = !after
      ? undefined
      : table.tenantId
        ? sql`(${table.tenantId}, ${table.id}) > (${after.tenantId}::uuid, ${after.id}::uuid)`
        : gt(table.id, after.id)
    const rows = await db
      .select({ tenantId, id: table.id, sealed: column })
      .from(table as PgTable)
      .where(and(options.holds ?? isNotNull(column), past))
      .orderBy(...keyed.map((c) => asc(c)))
      .limit(limit)
    return rows as SealedRow[]
  }

  /** Writes `to` only if the row still holds `row.sealed` (a concurrent write wins). */
  async function reseal(db: Handle, row: SealedRow, to: string) {
    const rows = await db
      .update(table as PgTable)
      .set({ [property as string]: to } as never)
      .where(
        and(
          eq(tenantId, row.tenantId),
          table.tenantId ? eq(table.id, row.id) : undefined,
          eq(column, row.sealed),
        ),
      )
      .returning({ id: table.id })
    return rows.length > 0
  }

  const within = options.within
  const inner = (row: SealedRow) => (within ? (within.get(row.sealed) ?? '') : row.sealed)
  return {
    name,
    seal,
    open,
    rotation: (db, cipher) => ({
      scan: (after, limit) => scan(db, after, limit),
      sealed: inner,
      open: (row) => open(cipher, row, inner(row)),
      seal: (row, plaintext) => {
        const sealed = seal(cipher, row, plaintext)
        return within ? within.put(row.sealed, sealed) : sealed
      },
      swap: (row, stored) => reseal(db, row, stored),
      describe: options.describe,
    }),
  }
}
