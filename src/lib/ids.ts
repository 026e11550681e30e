// UUIDv7 (RFC 9562 §5.7): time-ordered ids keep B-tree inserts at the right edge.
import { randomBytes } from 'node:crypto'

let lastMs = 0
let counter = 0

/**
 * Monotonic within this process (RFC 9562 §6.2, method 1): ids made in the same
 * millisecond, such as the audit rows of one transaction, sort in the order they were made.
 */
export function uuidv7(now: number = Date.now()): string {
  const bytes = randomBytes(16)
  if (now > lastMs) {
    lastMs = now
    counter = bytes.readUInt16BE(6) & 0x07ff // leaves room to count up within the ms
  } else {
    counter++
    if (counter > 0x0fff) {
      lastMs++
      counter = 0
    }
  }
  bytes.writeUIntBE(lastMs, 0, 6)
  bytes.writeUInt16BE(0x7000 | counter, 6)
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export function isUuid(value: string): boolean {
  return UUID_RE.test(value)
}
