// Validation per CONTRACT §3: JSON bodies are checked strictly, without type coercion
// (a number where a string is due is a 400). Query strings and path parameters arrive as
// text, so only they are coerced (`?limit=20`, `?includeRevoked=true`).
// Unknown properties are removed before the handler sees the body: ignored, never applied.
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { Ajv, type Options } from 'ajv'
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
  const dateTime = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (value: string) => {
      if (!dateTime(value)) return false
      const ms = Date.parse(value)
      return ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT
    },
  })
  return ajv
}

export function installValidation(app: FastifyInstance): void {
  const strict = makeAjv(false)
  const coercing = makeAjv(true)
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? strict : coercing
    return ajv.compile(schema as object)
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
    const compile = build(externalSchemas, options)
    const built = new Map<string, (data: unknown) => string>()
    return (route) => {
      const key = JSON.stringify(route.schema)
      let serialize: ((data: unknown) => string) | undefined
      return (data) => {
        if (!serialize) {
          serialize = built.get(key)
          if (!serialize) {
            serialize = compile(route)
            built.set(key, serialize)
          }
        }
        return serialize(data)
      }
    }
  }
}
