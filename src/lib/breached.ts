// Breached passwords (CONTRACT §21): a new password is looked up in the list shipped with
// the service (breached-passwords.txt) and, when PWNED_PASSWORDS_URL is set, in a Pwned
// Passwords range API by k-anonymity: only the first 5 hex characters of the password's
// SHA-1 leave the service (`GET {base}/range/{prefix}`, `Add-Padding: true`, so the answer's
// size tells nothing either), and the suffix is looked for in the answer here. An answer
// slower than 1 s, or any failure, is logged and counts as "not found": the check never
// blocks a sign-up.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { normalizePassword } from './passwords.ts'

export const RANGE_TIMEOUT_MS = 1000

const SHIPPED: ReadonlySet<string> = new Set(
  readFileSync(new URL('./breached-passwords.txt', import.meta.url), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#')),
)

export interface BreachLog {
  warn: (details: object, message: string) => void
}

export class BreachedPasswords {
  private readonly base: string | undefined
  private readonly log: BreachLog | undefined
  constructor(options: { base?: string; log?: BreachLog }) {
    this.base = options.base?.replace(/\/+$/, '')
    this.log = options.log
  }

  /** Whether the password is in the shipped list or (when configured) the range API's. */
  async isBreached(password: string): Promise<boolean> {
    const normalized = normalizePassword(password)
    if (SHIPPED.has(normalized.toLowerCase())) return true
    if (!this.base) return false
    const sha1 = createHash('sha1').update(normalized, 'utf8').digest('hex').toUpperCase()
    const prefix = sha1.slice(0, 5)
    const suffix = sha1.slice(5)
    try {
      const response = await fetch(`${this.base}/range/${prefix}`, {
        headers: { 'add-padding': 'true', 'user-agent': 'tenant-auth' },
        signal: AbortSignal.timeout(RANGE_TIMEOUT_MS),
        redirect: 'error',
      })
      if (!response.ok) throw new Error(`status ${response.status}`)
      const body = await response.text()
      for (const line of body.split('\n')) {
        const [hash, count] = line.trim().split(':')
        // Padding rows carry a count of 0: not a breached password.
        if (hash === suffix) return Number(count) > 0
      }
      return false
    } catch (error) {
      this.log?.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'breached-password range lookup skipped',
      )
      return false
    }
  }
}
