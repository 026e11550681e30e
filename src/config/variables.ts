// The kinds of variable the environment's schema (schema.ts) is made of, and its one reader.
// Every variable arrives as a string, so each kind is a TypeBox string schema (JSON Schema: a
// `pattern`, an `anyOf` of constants, a `default`, a `description`) that also carries `parse`,
// from the string to the value the service uses or the problem that becomes the error line,
// and what the reference page (docs/configuration.md) shows. CONTRACT §1: bad configuration
// stops the process at start with one line naming the variable.
//
// The reader checks the two JSON Schema keywords the kinds use itself instead of loading
// TypeBox's value module: that module costs about 100 ms of CPU at every start, more than a
// tenth of importing the whole service, for checks a regular expression does.
import Type, { type TObject, type TSchema } from 'typebox'

export const GROUPS = [
  'Mode and logs',
  'Listening and URLs',
  'Database',
  'Redis',
  'Signing and encryption keys',
  'Mail',
  'Identity provider (hosted sign-in)',
  'OpenID provider',
  'Webhooks',
  'Access and proxies',
  'Rate limits',
  'Capacity and retention',
  'Start (read before the configuration)',
] as const

/** What each variable carries besides its type. */
export type VariableInfo = {
  group: (typeof GROUPS)[number]
  /** What it does, for the reference page. */
  description: string
  /** The CONTRACT section its rule comes from, where one does (`§1`). */
  contract?: string
  /** Its type as the reference shows it: `integer 0–65535`, `URL`, `true or false`. */
  kind: string
  /** The default as the reference shows it, when it is computed rather than a value. */
  shown?: string
  /** A secret: kept in a secret store (a Kubernetes Secret), never in a manifest or a log. */
  secret?: boolean
  /** `required`: NODE_ENV=production refuses to start without it; `refused`: with `true`. */
  production?: 'required' | 'refused'
  /** The error line after `NAME: ` when the value does not match `pattern` or `anyOf`. */
  errorMessage?: string
}

type Options = VariableInfo & { default?: string }
export type Problem = { problem: string }
type Parse<T> = (raw: string) => T | Problem

/** A variable's schema as the reader and the reference page see it. */
export type Variable<T = unknown> = TSchema &
  Options & {
    pattern?: string
    anyOf?: { const: string }[]
    parse: Parse<T>
  }

function variable<T>(schema: TSchema, parse: Parse<T>): Variable<T> {
  return Object.assign(schema, { parse }) as Variable<T>
}

/** Plain text, taken as it is. */
export function text(options: Options): Variable<string> {
  return variable(Type.String(options), (raw) => raw)
}

/** One of a few literal values. */
export function oneOf<const V extends readonly [string, ...string[]]>(
  values: V,
  options: Options,
): Variable<V[number]> {
  const either = values.length === 2 ? `${values[0]} or ${values[1]}` : undefined
  const errorMessage = `must be ${either ?? `one of ${values.join(', ')}`}`
  const schema = Type.Union(
    values.map((v) => Type.Literal(v)),
    { errorMessage, ...options },
  )
  return variable(schema, (raw) => raw as V[number])
}

/** `true` or `false`, as a boolean. */
export function flag(
  options: Omit<Options, 'kind'> & { default: 'true' | 'false' },
): Variable<boolean> {
  const either = oneOf(['true', 'false'], { kind: '`true` or `false`', ...options })
  return variable(either, (raw) => raw === 'true')
}

/**
 * A whole number (decimal digits) from `minimum` to `maximum`. Its error line: `errorMessage`
 * when given, else one for what is not a number and one for what is too small.
 */
export function integer(
  options: Options & { minimum?: number; maximum?: number },
): Variable<number> {
  const { minimum = 0, maximum = Number.POSITIVE_INFINITY, ...rest } = options
  const schema = Type.String({
    pattern: '^[0-9]+$',
    errorMessage: 'must be a non-negative integer',
    ...rest,
  })
  return variable(schema, (raw) => {
    const n = Number(raw)
    if (n >= minimum && n <= maximum) return n
    return { problem: rest.errorMessage ?? `must be at least ${minimum}` }
  })
}

/** A URL of one of `schemes` (`postgres://…`), taken as it is. */
export function urlOf(schemes: string[], options: Options): Variable<string> {
  const listed = schemes.map((s) => `${s}://`)
  const names = `${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}`
  const schema = Type.String({
    pattern: `^(${schemes.join('|')})://`,
    errorMessage: `must start with ${names}`,
    ...options,
  })
  return variable(schema, (raw) => raw)
}

/** An http(s) URL; trailing slashes dropped. */
export function httpUrl(options: Options): Variable<string> {
  return variable(Type.String({ format: 'uri', ...options }), (raw) => {
    const url = raw.replace(/\/+$/, '')
    return isHttpUrl(url) ? url : { problem: 'must be an http(s) URL' }
  })
}

/** A value its own parser reads: the value, or why it is refused (the error line). */
export function parsed<T>(parse: Parse<T>, options: Options): Variable<T> {
  return variable(Type.String(options), parse)
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

export function splitList(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** The values a schema's variables read to: `T`, or `T | undefined` for an optional one. */
export type Values<P> = {
  [K in keyof P]: P[K] extends Variable<infer T>
    ? P[K] extends { '~optional': true }
      ? T | undefined
      : T
    : never
}

type Env = Record<string, string | undefined>

/** What is wrong with `raw` for this variable, or its value. */
function read<T>(variable: Variable<T>, raw: string): { value: T } | Problem {
  const pattern = variable.pattern === undefined || new RegExp(variable.pattern).test(raw)
  const listed = variable.anyOf === undefined || variable.anyOf.some((s) => s.const === raw)
  if (!pattern || !listed) return { problem: variable.errorMessage ?? 'is not valid' }
  const value = variable.parse(raw)
  return isProblem(value) ? value : { value }
}

function isProblem(value: unknown): value is Problem {
  return typeof value === 'object' && value !== null && 'problem' in value && !Array.isArray(value)
}

/**
 * Reads the environment through the schema: an unset or empty variable takes its default;
 * a value that does not fit gives one line naming it (in the schema's order) and its default
 * in its place, so that the rules after it still see a whole configuration.
 */
export function readEnvironment<P extends Record<string, Variable>>(
  schema: TObject<P>,
  env: Env,
): { values: Values<P>; problems: string[] } {
  const values: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, variable] of Object.entries(schema.properties)) {
    const raw = env[name]
    const given = raw === undefined || raw === '' ? undefined : read(variable, raw)
    if (given && 'problem' in given) problems.push(`${name}: ${given.problem}`)
    if (given && 'value' in given) values[name] = given.value
    else if (variable.default !== undefined) {
      const fallback = read(variable, variable.default)
      if ('problem' in fallback) throw new Error(`${name}: its default does not fit its schema`)
      values[name] = fallback.value
    }
  }
  return { values: values as Values<P>, problems }
}
