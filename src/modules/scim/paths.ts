// PATCH paths (RFC 7644 §3.5.2, the `path` ABNF of its Figure 1) over the attributes this
// service keeps: `attr`, `attr.sub`, `emails[filter]` and `emails[filter].sub`, each
// optionally led by the core User schema URN. The value filter is `sub eq value` clauses
// joined by `and` (`emails[type eq "work"].value`). An attribute the User resource of this
// service does not have is 400 invalidPath; a read-only one (id, meta, groups) is 400
// mutability.
import { invalidPath, mutability } from './errors.ts'
import { USER_SCHEMA } from './resource.ts'

/** The writable attributes and, for complex ones, their sub-attributes. */
export const WRITABLE: Record<string, readonly string[] | null> = {
  userName: null,
  displayName: null,
  externalId: null,
  preferredLanguage: null,
  active: null,
  password: null,
  name: ['givenName', 'familyName', 'formatted'],
  emails: ['value', 'type', 'primary'],
}
const READ_ONLY = ['id', 'meta', 'groups', 'schemas']

export interface ValueClause {
  sub: string
  value: string | boolean
}

export interface Path {
  attribute: string
  /** Only on emails: the elements the operation targets. */
  filter?: ValueClause[]
  sub?: string
}

/** The canonical spelling of an attribute name (RFC 7643 §2.1: names are case-insensitive). */
export function canonical(name: string, names: readonly string[]): string | undefined {
  const lower = name.toLowerCase()
  return names.find((n) => n.toLowerCase() === lower)
}

export function topAttribute(name: string): string | undefined {
  const found = canonical(name, Object.keys(WRITABLE))
  if (found) return found
  if (canonical(name, READ_ONLY)) throw mutability(`${name} is read-only.`)
  return undefined
}

const URN_PREFIX = `${USER_SCHEMA}:`.toLowerCase()
const FILTERED = /^([A-Za-z][\w$-]*)\[(.*)\](?:\.([A-Za-z][\w$-]*))?$/s
const PLAIN = /^([A-Za-z][\w$-]*)(?:\.([A-Za-z][\w$-]*))?$/
const CLAUSE = /^\s*([A-Za-z][\w$-]*)\s+eq\s+("(?:[^"\\]|\\.)*"|true|false)\s*/i

export function parsePath(path: string): Path {
  let rest = path.trim()
  if (rest.length > 500) throw invalidPath('The path is too long.')
  if (rest.toLowerCase().startsWith(URN_PREFIX)) rest = rest.slice(URN_PREFIX.length)
  const filtered = FILTERED.exec(rest)
  const plain = filtered ? null : PLAIN.exec(rest)
  const [, name, second] = filtered ?? plain ?? []
  if (name === undefined) throw invalidPath(`The path "${clip(path)}" is not valid.`)
  const attribute = topAttribute(name)
  if (!attribute) throw invalidPath(`The User resource has no attribute "${clip(name)}".`)
  const subs = WRITABLE[attribute]
  const subName = filtered ? filtered[3] : second
  let sub: string | undefined
  if (subName !== undefined) {
    sub = subs ? canonical(subName, subs) : undefined
    if (!sub) throw invalidPath(`${attribute} has no sub-attribute "${clip(subName)}".`)
  }
  if (!filtered) return { attribute, sub }
  if (attribute !== 'emails') throw invalidPath(`${attribute} is not multi-valued.`)
  return { attribute, filter: parseValueFilter(filtered[2], subs ?? []), sub }
}

function parseValueFilter(text: string, subs: readonly string[]): ValueClause[] {
  const clauses: ValueClause[] = []
  let rest = text
  for (;;) {
    const match = CLAUSE.exec(rest)
    if (!match) throw invalidPath(`The value filter "${clip(text)}" is not supported.`)
    const sub = canonical(match[1], subs)
    if (!sub) throw invalidPath(`emails has no sub-attribute "${clip(match[1])}".`)
    const literal = match[2]
    let value: string | boolean
    if (literal.startsWith('"')) {
      try {
        value = JSON.parse(literal) as string
      } catch {
        throw invalidPath('The value filter holds a malformed string.')
      }
    } else value = literal.toLowerCase() === 'true'
    clauses.push({ sub, value })
    rest = rest.slice(match[0].length)
    if (rest === '') return clauses
    const and = /^and\s+/i.exec(rest)
    if (!and) throw invalidPath(`The value filter "${clip(text)}" is not supported.`)
    rest = rest.slice(and[0].length)
  }
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}…` : text
}
