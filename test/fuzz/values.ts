// Values for one schema of the OpenAPI document: mostly valid-shaped (so a request gets
// past validation and reaches the handler, with the fixtures' real emails, tokens and ids
// among the candidates), else hostile text, the wrong type, a missing or an extra field.
import * as fc from 'fast-check'
import { EMAIL_PATTERN } from '../../src/lib/email.ts'
import { SAFE_TEXT_PATTERN } from '../../src/schemas.ts'
import { hostileString, tainted } from './strings.ts'
import { type Ref, type RefKey, ref } from './world.ts'

export type Schema = Record<string, any>

const refs = (...keys: RefKey[]) => fc.constantFrom(...keys.map(ref))

// A 1×1 PNG, so that a valid logo upload is among the candidates.
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

const DATES = [
  '1970-01-01T00:00:00Z',
  '1969-12-31T23:59:59Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '2024-02-30T00:00:00Z',
  '2024-01-01T00:00:00+14:00',
  '2024-01-01T00:00:00.123456789Z',
  '2016-12-31T23:59:60Z',
  '+275760-09-13T00:00:00Z',
]

const base64Json = fc
  .oneof(fc.jsonValue({ maxDepth: 2 }), hostileString)
  .map((v) => Buffer.from(JSON.stringify(v) ?? 'null').toString('base64url'))

/** Valid-shaped text for a string field, by its format, pattern or name. */
function validString(schema: Schema, name: string): fc.Arbitrary<string | Ref> {
  const max = Math.min(schema.maxLength ?? 60, 60)
  const min = schema.minLength ?? 0
  if (schema.enum) return fc.constantFrom(...(schema.enum as string[]))
  if (schema.pattern === EMAIL_PATTERN) {
    return fc.oneof(
      { weight: 4, arbitrary: refs('adminEmail', 'memberEmail', 'otherEmail', 'inviteEmail') },
      fc.emailAddress().filter((e) => e.length <= 254),
      fc.nat().map((n) => ` Fuzz-${n}@Example.com`),
    )
  }
  if (schema.format === 'uuid' || /^(id|userId)$/.test(name)) {
    return fc.oneof(
      { weight: 3, arbitrary: refs('adminId', 'memberId', 'otherUserId') },
      { weight: 2, arbitrary: refs('apiKeyId', 'otherApiKeyId', 'inviteId', 'otherInviteId') },
      fc.uuid(),
      fc.constantFrom(
        '00000000-0000-0000-0000-000000000000',
        'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
      ),
    )
  }
  if (schema.format === 'date-time') {
    return fc.oneof(
      fc.constantFrom(...DATES),
      fc
        .date({ min: new Date(0), max: new Date('9999-12-31'), noInvalidDate: true })
        .map((d) => d.toISOString()),
    )
  }
  // Every free string carries CONTRACT §8's pattern: its name says more of what fits.
  if (schema.pattern && schema.pattern !== SAFE_TEXT_PATTERN) {
    return fc.stringMatching(new RegExp(schema.pattern, 'u'))
  }
  if (/password/i.test(name)) {
    return fc.oneof(
      { weight: 3, arbitrary: refs('password') },
      fc.constantFrom('velvet-harbor-quill-93', 'password1234', 'x'.repeat(12)),
      fc.string({ minLength: Math.max(min, 12), maxLength: 40 }),
    )
  }
  if (name === 'refreshToken') {
    return fc.oneof(
      { weight: 3, arbitrary: refs('adminRefresh', 'memberRefresh', 'otherRefresh') },
      fc.base64String({ minLength: 4, maxLength: 44 }),
    )
  }
  if (name === 'token') return fc.oneof(refs('inviteToken', 'otherInviteToken'), base64Json)
  if (name === 'cursor') return fc.oneof(base64Json, fc.string({ minLength: 1, maxLength: 20 }))
  if (name === 'data') {
    return fc.constantFrom(
      PNG,
      `data:image/png;base64,${PNG}`,
      PNG.slice(0, 40),
      `${PNG}AAAA`,
      'not base64!',
      Buffer.from('GIF89a').toString('base64'),
    )
  }
  return fc.string({ minLength: min, maxLength: Math.max(min, max) })
}

/** Anything but what the schema asks for. */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
  fc.integer({ min: 1, max: 2000 }).map((n) => nest(n)),
)

function nest(depth: number): unknown {
  let value: unknown = 'deep'
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { a: value }
  return value
}

/** A value for `schema` (the property or parameter `name`). */
export function value(schema: Schema, name = ''): fc.Arbitrary<unknown> {
  if (schema.anyOf && !schema.type && !schema.properties) {
    return fc.oneof(...schema.anyOf.map((s: Schema) => value(s, name)))
  }
  if (schema.type === 'object' || schema.properties) return object(schema)
  return fc.oneof(
    { weight: 14, arbitrary: valid(schema, name) },
    { weight: 2, arbitrary: hostileString },
    { weight: 2, arbitrary: tainted(valid(schema, name)) },
    { weight: 1, arbitrary: wrongType },
  )
}

function valid(schema: Schema, name: string): fc.Arbitrary<unknown> {
  switch (schema.type) {
    case 'integer':
      return fc.oneof(
        fc.integer({ min: schema.minimum ?? -1e9, max: schema.maximum ?? 1e9 }),
        fc.constantFrom(0, -1, 2 ** 31, 2 ** 53, 1e21),
      )
    case 'number':
      return fc.double()
    case 'boolean':
      return fc.boolean()
    default:
      return validString(schema, name)
  }
}

/**
 * An object: its properties valid-shaped or not; sometimes a required one missing, an
 * extra one added (a prototype key among them), or a combinator's branch chosen.
 */
function object(schema: Schema): fc.Arbitrary<unknown> {
  const props: Record<string, Schema> = schema.properties ?? {}
  const required = new Set<string>(schema.required ?? [])
  // oneOf/anyOf/allOf of `required` lists (initial-enroll): every listed name may appear.
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, s] of Object.entries(props)) model[key] = value(s, key)
  const shaped = fc.record(model, { requiredKeys: [...required].filter((k) => k in model) })
  const extra = fc.constantFrom('__proto__', 'constructor', 'role', 'tenantId', 'isAdmin', '\u0000')
  return fc.oneof(
    { weight: 8, arbitrary: shaped },
    {
      weight: 1,
      arbitrary: fc.tuple(shaped, fc.nat()).map(([o, n]) => {
        const copy = { ...(o as Record<string, unknown>) }
        const keys = Object.keys(copy)
        if (keys.length) delete copy[keys[n % keys.length]]
        return copy
      }),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(shaped, extra, fc.oneof(wrongType, hostileString)).map(([o, k, v]) => {
        const copy = { ...(o as Record<string, unknown>) }
        Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true })
        return copy
      }),
    },
  )
}
