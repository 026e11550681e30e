// PATCH (RFC 7644 §3.5.2) applied to the resource as the service shows it: each operation
// changes a copy of the current User resource, and the result is then read like a PUT body
// (resource.ts), so PATCH and PUT share every rule. `op` is matched in any case ("Replace",
// as Microsoft Entra ID sends it). Without a path, add and replace take an object of
// attributes (Okta's `{"op":"replace","value":{"active":false}}`); attributes the service
// does not keep are ignored there, as in a PUT body, while a path naming one is 400
// invalidPath. remove needs a path (400 noTarget).
import { invalidPath, invalidSyntax, invalidValue, noTarget } from './errors.ts'
import {
  canonical,
  type Path,
  parsePath,
  topAttribute,
  type ValueClause,
  WRITABLE,
} from './paths.ts'
import { attribute, isObject, readBoolean, USER_SCHEMA } from './resource.ts'

type Resource = Record<string, unknown>
type Op = 'add' | 'replace' | 'remove'

const MAX_OPERATIONS = 100

/** The resource after the PatchOp `body`; `resource` is left as it was. */
export function applyPatch(resource: Resource, body: unknown): Resource {
  if (!isObject(body)) throw invalidSyntax('The request body must be a PatchOp message.')
  const operations = attribute(body, 'Operations')
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalidSyntax('Operations must be a non-empty list.')
  }
  if (operations.length > MAX_OPERATIONS) {
    throw invalidSyntax(`At most ${MAX_OPERATIONS} operations a request.`)
  }
  const result = structuredClone(resource)
  for (const operation of operations) {
    if (!isObject(operation)) throw invalidSyntax('Each operation must be an object.')
    const name = attribute(operation, 'op')
    const op = typeof name === 'string' ? canonical(name, ['add', 'replace', 'remove']) : undefined
    if (!op) throw invalidSyntax('op must be add, replace or remove.')
    const path = attribute(operation, 'path')
    const value = attribute(operation, 'value')
    if (path === undefined || path === null || path === '') {
      if (op === 'remove') throw noTarget('remove needs a path.')
      applyWithoutPath(result, op as Op, value)
    } else {
      if (typeof path !== 'string') throw invalidPath('path must be a string.')
      applyAt(result, op as Op, parsePath(path), value)
    }
  }
  return result
}

function applyWithoutPath(resource: Resource, op: Op, value: unknown) {
  if (!isObject(value)) throw invalidValue(`${op} without a path takes an object of attributes.`)
  for (const [key, inner] of Object.entries(value)) {
    // The core schema's URN as a key holds its attributes (RFC 7644 §3.5.2, Figure 1).
    if (key.toLowerCase() === USER_SCHEMA.toLowerCase()) {
      applyWithoutPath(resource, op, inner)
      continue
    }
    const prefix = `${USER_SCHEMA}:`
    const bare = key.toLowerCase().startsWith(prefix.toLowerCase()) ? key.slice(prefix.length) : key
    const head = bare.split(/[.[]/)[0]
    let known: string | undefined
    try {
      known = topAttribute(head)
    } catch {
      known = undefined // read-only attributes in a value are ignored, as in a PUT body
    }
    if (known) applyAt(resource, op, parsePath(key), inner)
  }
}

function applyAt(resource: Resource, op: Op, path: Path, value: unknown) {
  const { attribute: name, sub, filter } = path
  if (op !== 'remove' && value === undefined) throw invalidValue(`${op} needs a value.`)
  if (name === 'emails') return applyToEmails(resource, op, path, value)
  if (WRITABLE[name] === null) {
    if (op === 'remove') delete resource[name]
    else resource[name] = value
    return
  }
  // name, a complex attribute: a sub-attribute, or the whole (an object merged in).
  if (filter) throw invalidPath(`${name} is not multi-valued.`)
  const current = isObject(resource[name]) ? (resource[name] as Resource) : {}
  if (sub) {
    if (op === 'remove') delete current[sub]
    else current[sub] = value
  } else if (op === 'remove') {
    delete resource[name]
    return
  } else {
    if (!isObject(value)) throw invalidValue(`${name} takes an object.`)
    // add and replace alike merge: RFC 7644 §3.5.2.3, "Sub-attributes that are not
    // specified in the 'value' parameter are left unchanged" (the same with no path, whose
    // value names the complex attribute). Clearing one takes remove or a PUT.
    Object.assign(current, canonicalKeys(value, WRITABLE[name] ?? []))
  }
  resource[name] = current
}

function applyToEmails(resource: Resource, op: Op, path: Path, value: unknown) {
  const subs = WRITABLE.emails ?? []
  const emails = Array.isArray(resource.emails) ? (resource.emails as Resource[]) : []
  const { sub, filter } = path
  if (!filter && !sub) {
    if (op === 'remove') {
      delete resource.emails
      return
    }
    const incoming = (Array.isArray(value) ? value : [value]).map((v) => {
      if (!isObject(v)) throw invalidValue('emails takes objects.')
      return canonicalKeys(v, subs)
    })
    // RFC 7643 §2.4: at most one primary; a new primary value takes the mark.
    const kept = op === 'replace' ? [] : emails
    if (incoming.some(isPrimary)) for (const e of kept) e.primary = false
    resource.emails = [...kept, ...incoming]
    return
  }
  const matched = filter ? emails.filter((e) => matches(e, filter)) : emails
  if (op === 'remove') {
    if (sub) for (const e of matched) delete e[sub]
    else resource.emails = emails.filter((e) => !matched.includes(e))
    return
  }
  if (matched.length === 0) {
    // RFC 7644 §3.5.2.3: a replace whose filter matches nothing fails; an add creates the
    // element the filter describes.
    if (op === 'replace') throw noTarget('No email matches the value filter.')
    const created: Resource = Object.fromEntries((filter ?? []).map((c) => [c.sub, c.value]))
    matched.push(created)
    emails.push(created)
  }
  for (const e of matched) {
    if (sub) e[sub] = value
    else if (isObject(value)) Object.assign(e, canonicalKeys(value, subs))
    else throw invalidValue('emails elements take objects.')
  }
  resource.emails = emails
}

function matches(element: Resource, filter: ValueClause[]): boolean {
  return filter.every(({ sub, value }) => {
    const actual = element[sub]
    if (typeof value === 'boolean')
      return actual !== undefined && readBoolean(actual, sub) === value
    // type and value of emails are not case-exact (RFC 7643 §4.1.2).
    return typeof actual === 'string' && actual.toLowerCase() === value.toLowerCase()
  })
}

function isPrimary(email: Resource): boolean {
  return email.primary !== undefined && readBoolean(email.primary, 'emails.primary')
}

/** The object with its known keys spelled canonically; unknown keys are dropped. */
function canonicalKeys(value: Resource, names: readonly string[]): Resource {
  const out: Resource = {}
  for (const [key, inner] of Object.entries(value)) {
    const name = canonical(key, names)
    if (name) out[name] = inner
  }
  return out
}
