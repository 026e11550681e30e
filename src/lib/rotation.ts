// Key rotation of field-encrypted columns (CONTRACT §1, ENCRYPTION_KEYS), written once for
// every sealed column: each value not sealed under the current (first) key is opened with
// the key of its version and sealed again, then swapped in only if it is still the value
// read (a concurrent write wins). Safe to run while the service is up, and again.
import type { FieldCipher } from './crypto.ts'

export interface RotationReport {
  /** Re-sealed under the current key. */
  rotated: number
  /** Already under the current key. */
  current: number
  /** Changed by another write while being rotated (the new value is current already). */
  raced: number
  /** Could not be opened with any listed key (a retired key still in use): left as is. */
  unreadable: { row: string; version: string }[]
}

/** One sealed column: how to scan it in batches, open, seal and swap a value. */
export interface SealedColumn<Row> {
  /** The next `limit` rows with a sealed value after `after`, in a stable order. */
  scan(after: Row | undefined, limit: number): Promise<Row[]>
  sealed(row: Row): string
  /** The plaintext, or undefined when no listed key opens it. */
  open(row: Row): string | undefined
  seal(row: Row, plaintext: string): string
  /** Writes `sealed` if the row still holds the value read; whether it did. */
  swap(row: Row, sealed: string): Promise<boolean>
  /** Names the row in a report (ids only, never the value). */
  describe(row: Row): string
}

const BATCH = 500

export async function rotateColumn<Row>(
  cipher: FieldCipher,
  column: SealedColumn<Row>,
): Promise<RotationReport> {
  const report: RotationReport = { rotated: 0, current: 0, raced: 0, unreadable: [] }
  let after: Row | undefined
  for (;;) {
    const batch = await column.scan(after, BATCH)
    if (batch.length === 0) return report
    for (const row of batch) {
      const version = cipher.versionOf(column.sealed(row))
      if (version === cipher.currentVersion) {
        report.current++
        continue
      }
      const plaintext = column.open(row)
      if (plaintext === undefined) {
        report.unreadable.push({ row: column.describe(row), version })
        continue
      }
      if (await column.swap(row, column.seal(row, plaintext))) report.rotated++
      else report.raced++
    }
    after = batch[batch.length - 1]
  }
}
