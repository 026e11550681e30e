// What an erasure leaves of an audit event (CONTRACT §9): the action, the actor and the
// time stay; the erased address leaves the email column and the metadata, and the ip and
// userAgent go. Pure functions, so the rule is read and tested in one place.
import type { AuditEvent, ScrubbedEvent } from '../audit/trail.ts'

/** What replaces the address inside a longer text. */
export const ERASED = '[erased]'

// Characters that may stand beside an address as part of another one: "bob.ada@x.io" or
// "ada@x.io.uk" do not name "ada@x.io". A full stop that ends a sentence still bounds it.
const LOCAL_CHARS = "\\p{L}\\p{N}.!#$%&'*+/=?^_`{|}~-"
const DOMAIN_CHARS = '\\p{L}\\p{N}-'

/** A matcher of any of the spellings of an address as a whole word, any case. */
export function addressPattern(addresses: string[]): RegExp {
  const escaped = addresses.map((a) => a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')
  return new RegExp(`(?<![${LOCAL_CHARS}])(?:${escaped})(?!\\.?[${DOMAIN_CHARS}])`, 'giu')
}

function names(text: string, pattern: RegExp): boolean {
  pattern.lastIndex = 0
  return pattern.test(text)
}

/** `value` without the address: a string that is only the address is dropped (undefined). */
function scrubValue(value: unknown, pattern: RegExp): unknown {
  if (typeof value === 'string') {
    if (!names(value, pattern)) return value
    const rest = value.replace(pattern, ERASED)
    return rest.trim() === ERASED ? undefined : rest
  }
  if (Array.isArray(value)) {
    return value.map((v) => scrubValue(v, pattern)).filter((v) => v !== undefined)
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(value)) {
      const scrubbed = scrubValue(v, pattern)
      if (scrubbed !== undefined)
        out[names(key, pattern) ? key.replace(pattern, ERASED) : key] = scrubbed
    }
    return out
  }
  return value
}

/**
 * The event as the erasure of `userId` (its address spelt as `addresses`) leaves it, or undefined when it
 * concerns neither: it is about the user, made by the user, or names the address. `keep`
 * spares the record of this erasure itself (it names the user by id only, and its ip is
 * the admin's).
 */
export function scrubEvent(
  event: AuditEvent,
  userId: string,
  addresses: string[],
  keep: (event: AuditEvent) => boolean = () => false,
): ScrubbedEvent | undefined {
  if (keep(event)) return undefined
  const pattern = addressPattern(addresses)
  const metadataNames = names(JSON.stringify(event.metadata ?? {}), pattern)
  const emailNames = event.email !== null && names(event.email, pattern)
  const about = event.userId === userId || event.actorId === userId
  if (!about && !metadataNames && !emailNames) return undefined
  return {
    id: event.id,
    // The email column of an event about the user is the user's address.
    email: emailNames || event.userId === userId ? null : event.email,
    metadata: scrubValue(event.metadata ?? {}, pattern) as Record<string, unknown>,
  }
}
