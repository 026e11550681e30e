// Validation per CONTRACT §3: JSON bodies are checked strictly, without type coercion
// (a number where a string is due is a 400). Query strings and path parameters arrive as
// text, so only they are coerced (`?limit=20`, `?includeRevoked=true`).
// Unknown properties are removed before the handler sees the body: ignored, never applied.
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { Ajv, type ErrorObject, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import { fullFormats } from 'ajv-formats/dist/formats.js'
import type { FastifyInstance, FastifySchema } from 'fastify'
import { isEmail } from '../lib/email.ts'
import { isUuid } from '../lib/ids.ts'

const EARLIEST_INSTANT = Date.UTC(1970, 0, 1)
const LATEST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

const base: Options = {
  allErrors: true,
  removeAdditional: true,
  useDefaults: true,
  strict: false,
}

function makeAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ ...base, coerceTypes })
  // biome-ignore lint/suspicious/noExplicitAny: ajv-formats' default export is typed for CJS.
  ;(addFormats as any).default ? (addFormats as any).default(ajv) : (addFormats as any)(ajv)
  // Emails are trimmed before they are compared, so surrounding spaces are allowed here.
  ajv.addFormat('email', { type: 'string', validate: isEmail })
  ajv.addFormat('digits6', /^[0-9]{6}$/)
  // ajv-formats also takes `urn:uuid:…`, which PostgreSQL refuses: only the bare form.
  ajv.addFormat('uuid', { type: 'string', validate: isUuid })
  // RFC 3339 allows a leap second (…:60Z) that JavaScript dates cannot hold, and years
  // (0000) that PostgreSQL cannot: only instants from 1970 to the end of 9999 are taken
  // (CONTRACT §8), instead of failing later with a 500.
  ajv.addFormat('date-time', { type: 'string', validate: isInstant })
  return ajv
}

const dateTime = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate

/** The `date-time` format as the service takes it; also checked row by row by the import. */
export function isInstant(value: string): boolean {
  if (!dateTime(value)) return false
  const ms = Date.parse(value)
  return ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null }

/**
 * Fastify compiles a validator for every part of every route when it starts: about 190 of
 * them, most for routes a given instance may never serve. Here each is compiled by Ajv
 * when its first request arrives, once per distinct schema and Ajv (the strict one for
 * bodies, the coercing one for query and path), which shortens every start and keeps the
 * code of unused validators out of memory (issue 10). Fastify reads a failed validation's
 * `errors` from the function it was given, so they are copied onto it after each call.
 */
export function installValidation(app: FastifyInstance): void {
  const strict = makeAjv(false)
  const coercing = makeAjv(true)
  const built = new Map<string, Validate>()
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    const key = `${httpPart === 'body' ? 'strict' : 'coercing'}:${JSON.stringify(schema)}`
    let compiled: Validate | undefined
    const validate: Validate = (data) => {
      if (!compiled) {
        compiled = built.get(key)
        if (!compiled) {
          compiled = ajv.compile(schema as object) as Validate
          built.set(key, compiled)
        }
      }
      const ok = compiled(data)
      validate.errors = compiled.errors
      return ok
    }
    return validate
  })
}

type SerializerFactory = ReturnType<typeof SerializerSelector>

/**
 * Fastify's serializer factory (fast-json-stringify), made lazy and shared. Fastify builds
 * a serializer for every status code of every route when it starts: with the error
 * envelope on each, that was about 0.9 s of CPU and 40 MB of heap at every start (issue
 * 10). Here a serializer is built when its first response is sent, once per distinct
 * schema: every route's 400, 401 and 404 share one. Its output is the same allowlist.
 */
export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector()
  return (externalSchemas, options) => {
    const compile = build(plainChoices(externalSchemas) as typeof externalSchemas, options)
    const built = new Map<string, (data: unknown) => string>()
    return (route) => {
      const key = JSON.stringify(route.schema)
      let serialize: ((data: unknown) => string) | undefined
      return (data) => {
        if (!serialize) {
          serialize = built.get(key)
          if (!serialize) {
            serialize = compile({ ...route, schema: plainChoices(route.schema) })
            built.set(key, serialize)
          }
        }
        return serialize(data)
      }
    }
  }
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean'])
/** Keywords whose values are data, not schemas: left as they are. */
const DATA_KEYWORDS = new Set(['examples', 'example', 'default', 'const', 'enum'])

type JsonSchema = { [keyword: string]: unknown }
const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The response schemas as the serializer is given them (the document and validation keep
 * theirs): a choice the serializer would settle by running an Ajv validator of each option
 * on every response (fast-json-stringify's anyOf: a nullable field `[X, null]`, a string
 * enum spelt as literals) becomes the plain schema that writes the same JSON for every
 * value the schema allows: `X` with `nullable: true` (null is written `null`, the rest as
 * X), or one string with `enum`. Those validators were a third of what GET /me allocated,
 * one per nullable field of the user record (issue 37). A value outside the schema was a
 * 500 and is now written as its type; the service's own values are never so.
 */
export function plainChoices(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plainChoices)
  if (!isSchema(schema)) return schema
  const out: JsonSchema = {}
  for (const [keyword, value] of Object.entries(schema)) {
    out[keyword] = DATA_KEYWORDS.has(keyword) ? value : plainChoices(value)
  }
  const options = out.anyOf
  if (!Array.isArray(options) || out.oneOf !== undefined || out.allOf !== undefined) return out
  const { anyOf: _choice, ...siblings } = out
  if (options.length === 2) {
    const nulls = options.filter(
      (o) => isSchema(o) && o.type === 'null' && Object.keys(o).length === 1,
    )
    const other = options.find((o) => !nulls.includes(o))
    if (nulls.length === 1 && isPlainScalar(other)) {
      return { ...siblings, ...other, nullable: true }
    }
  }
  const literals = options.every(
    (o) =>
      isSchema(o) &&
      o.type === 'string' &&
      typeof o.const === 'string' &&
      Object.keys(o).length === 2,
  )
  if (literals && options.length > 0 && siblings.type === undefined) {
    return { ...siblings, type: 'string', enum: options.map((o) => (o as JsonSchema).const) }
  }
  return out
}

/** A scalar schema with nothing that makes the serializer choose: no combinator, no ref. */
function isPlainScalar(schema: unknown): schema is JsonSchema {
  if (!isSchema(schema) || typeof schema.type !== 'string' || !SCALAR_TYPES.has(schema.type)) {
    return false
  }
  return ['anyOf', 'oneOf', 'allOf', '$ref', 'if', 'not', 'nullable', 'const'].every(
    (keyword) => schema[keyword] === undefined,
  )
}
