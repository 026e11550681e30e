// The SCIM filter grammar this service answers (CONTRACT §14), and nothing more:
//
//   filter = clause *( SP "and" SP clause )
//   clause = attribute SP "eq" SP value
//   attribute = "userName" / "externalId" / "emails.value" / "emails" / "active"
//               (case-insensitive, optionally led by the core User schema URN and ":")
//   value  = JSON string (for the text attributes) / "true" / "false" (for active)
//
// Everything else of RFC 7644 §3.4.2.2 (or, not, parentheses, value paths, other operators,
// null) is refused with 400 invalidFilter, and so is a malformed string: the parser answers
// a list of clauses, never text for a query (queries.ts turns each clause into a bound
// comparison).
import type { GroupClause } from '../groups/service.ts'
import { invalidFilter } from './errors.ts'
import { USER_SCHEMA } from './resource.ts'

export type FilterAttribute = 'userName' | 'externalId' | 'emails.value' | 'active'

export type Clause =
  | { attribute: 'userName' | 'externalId' | 'emails.value'; value: string }
  | { attribute: 'active'; value: boolean }

/** Longer filters than any client sends are refused before they are read. */
export const MAX_FILTER_LENGTH = 2000
const MAX_CLAUSES = 10

const ATTRIBUTES: Record<string, FilterAttribute> = {
  username: 'userName',
  externalid: 'externalId',
  'emails.value': 'emails.value',
  // RFC 7644 §3.4.2.2: a filter on a multi-valued attribute without a sub-attribute means
  // its `value`.
  emails: 'emails.value',
  active: 'active',
}

const URN_PREFIX = `${USER_SCHEMA.toLowerCase()}:`

/** Parses `filter`; throws 400 invalidFilter for anything outside the grammar above. */
export function parseFilter(filter: string): Clause[] {
  return parseClauses(filter, readClause)
}

/**
 * A Groups filter (CONTRACT §17): `displayName eq "…"` and `externalId eq "…"` (optionally
 * led by the Group schema URN), joined by `and`; anything else 400 invalidFilter.
 */
export function parseGroupFilter(filter: string): GroupClause[] {
  return parseClauses(filter, (reader) => {
    const name = reader.word()
    if (name === '') throw invalidFilter('Expected an attribute name.')
    let key = name.toLowerCase()
    if (key.startsWith(GROUP_URN_PREFIX)) key = key.slice(GROUP_URN_PREFIX.length)
    const attribute =
      key === 'displayname' ? 'displayName' : key === 'externalid' ? 'externalId' : undefined
    if (!attribute) {
      throw invalidFilter(
        `Filtering groups on "${clip(name)}" is not supported; use displayName or externalId.`,
      )
    }
    readEq(reader)
    return { attribute, value: reader.string() }
  })
}

const GROUP_URN_PREFIX = 'urn:ietf:params:scim:schemas:core:2.0:group:'

function readEq(reader: Reader) {
  if (!reader.skipSpace()) throw invalidFilter('Expected an operator after the attribute.')
  const operator = reader.word()
  if (operator.toLowerCase() !== 'eq') {
    throw invalidFilter(`The operator "${clip(operator)}" is not supported; only "eq" is.`)
  }
  if (!reader.skipSpace()) throw invalidFilter('Expected a value after "eq".')
}

function parseClauses<C>(filter: string, readClause: (reader: Reader) => C): C[] {
  if (filter.length > MAX_FILTER_LENGTH) throw invalidFilter('The filter is too long.')
  const reader = new Reader(filter)
  const clauses: C[] = []
  reader.skipSpace()
  for (;;) {
    clauses.push(readClause(reader))
    if (clauses.length > MAX_CLAUSES) throw invalidFilter('The filter has too many clauses.')
    if (!reader.skipSpace()) break
    if (reader.done()) break
    const joiner = reader.word()
    if (joiner.toLowerCase() !== 'and') {
      throw invalidFilter(`Only "and" may join comparisons; found "${clip(joiner)}".`)
    }
    if (!reader.skipSpace()) throw invalidFilter('Expected a space after "and".')
  }
  if (!reader.done()) throw invalidFilter('Unexpected text at the end of the filter.')
  return clauses
}

function readClause(reader: Reader): Clause {
  const name = reader.word()
  if (name === '') throw invalidFilter('Expected an attribute name.')
  let key = name.toLowerCase()
  if (key.startsWith(URN_PREFIX)) key = key.slice(URN_PREFIX.length)
  const attribute = Object.hasOwn(ATTRIBUTES, key) ? ATTRIBUTES[key] : undefined
  if (!attribute) {
    throw invalidFilter(
      `Filtering on "${clip(name)}" is not supported; use userName, externalId, emails.value or active.`,
    )
  }
  readEq(reader)
  if (attribute === 'active') {
    const literal = reader.word().toLowerCase()
    if (literal !== 'true' && literal !== 'false') {
      throw invalidFilter('active compares with true or false.')
    }
    return { attribute, value: literal === 'true' }
  }
  return { attribute, value: reader.string() }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}

/** A cursor over the filter text. */
class Reader {
  private readonly text: string
  private at = 0
  constructor(text: string) {
    this.text = text
  }

  done(): boolean {
    return this.at >= this.text.length
  }

  /** Skips spaces; answers whether there were any. */
  skipSpace(): boolean {
    const start = this.at
    while (this.at < this.text.length && this.text[this.at] === ' ') this.at++
    return this.at > start
  }

  /** A run of the characters of attribute names, operators and literals. */
  word(): string {
    const start = this.at
    while (this.at < this.text.length && /[A-Za-z0-9_.:$-]/.test(this.text[this.at])) this.at++
    return this.text.slice(start, this.at)
  }

  /** A JSON string literal (RFC 7644 §3.4.2.2: compValue strings are JSON strings). */
  string(): string {
    if (this.text[this.at] !== '"') throw invalidFilter('Expected a value in double quotes.')
    let end = this.at + 1
    while (end < this.text.length && this.text[end] !== '"') {
      end += this.text[end] === '\\' ? 2 : 1
    }
    if (end >= this.text.length) throw invalidFilter('The quoted value is not closed.')
    const literal = this.text.slice(this.at, end + 1)
    this.at = end + 1
    let value: string
    try {
      value = JSON.parse(literal) as string
    } catch {
      throw invalidFilter('The quoted value is not a valid JSON string.')
    }
    // An escape may spell what the raw query could not hold (CONTRACT §8).
    if (value.includes('\u0000') || !value.isWellFormed()) {
      throw invalidFilter('The quoted value holds a character that is not allowed.')
    }
    return value
  }
}
