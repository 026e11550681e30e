// The serializer's plain schemas (plainChoices, issue 37): a nullable scalar and a union of
// string literals are written without running a validator per option, and every value the
// schema allows is written exactly as the original schema's serializer writes it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { Type } from 'typebox'
import { plainChoices } from './validation.ts'

const Status = Type.Union([Type.Literal('Active'), Type.Literal('Suspended')], {
  description: 'the state',
})
const Record = Type.Object({
  id: Type.String(),
  status: Status,
  name: Type.Union([Type.String(), Type.Null()], { description: 'a name, or null' }),
  seen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  count: Type.Union([Type.Null(), Type.Integer()]),
  ratio: Type.Union([Type.Number(), Type.Null()]),
  flag: Type.Union([Type.Boolean(), Type.Null()]),
  tags: Type.Array(Type.Union([Type.String(), Type.Null()])),
  // Not plain: a choice between objects stays a choice.
  owner: Type.Union([Type.Object({ kind: Type.Literal('user'), id: Type.String() }), Type.Null()]),
  nested: Type.Object({ plan: Type.Union([Type.Literal('Free'), Type.Literal('Pro')]) }),
})

function serializer(schema: unknown) {
  const build = SerializerSelector()({}, {})
  return build({ schema, method: 'GET', url: '/', httpStatus: '200' } as never) as (
    data: unknown,
  ) => string
}

test('nullable scalars and string literals are written as before, without a choice', () => {
  const plain = plainChoices(Record) as Record<string, unknown>
  const text = JSON.stringify(plain)
  // What the serializer would have validated per option is gone, but the object choice.
  assert.equal((text.match(/"anyOf"/g) ?? []).length, 1, text)
  const { properties } = plain as { properties: Record<string, Record<string, unknown>> }
  assert.deepEqual(properties.status, {
    description: 'the state',
    type: 'string',
    enum: ['Active', 'Suspended'],
  })
  assert.deepEqual(properties.name, {
    description: 'a name, or null',
    type: 'string',
    nullable: true,
  })
  assert.deepEqual(properties.count, { type: 'integer', nullable: true })
  assert.ok(Array.isArray(properties.owner.anyOf), 'a choice of objects is kept')

  const before = serializer(Record)
  const after = serializer(plain)
  const base = {
    id: 'u1',
    status: 'Active',
    name: 'Ada "the first" \u2028',
    seen: '2026-12-03T10:00:00.000Z',
    count: 3,
    ratio: 0.25,
    flag: true,
    tags: ['a', null, 'b'],
    owner: { kind: 'user', id: 'x', secret: 'never shown' },
    nested: { plan: 'Pro', hidden: 1 },
    extra: 'not in the schema',
  }
  const values = [
    base,
    {
      ...base,
      status: 'Suspended',
      name: null,
      seen: null,
      count: null,
      ratio: null,
      flag: null,
      tags: [],
      owner: null,
    },
    { ...base, name: '', count: 0, ratio: -1e21, flag: false, nested: { plan: 'Free' } },
  ]
  for (const value of values) assert.equal(after(value), before(value))
  // The allowlist holds: what the schema does not name is not written.
  assert.ok(!after(base).includes('secret') && !after(base).includes('extra'))
})

test('schemas without such choices, and data keywords, are left as they are', () => {
  const schema = {
    type: 'object',
    properties: { a: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
    examples: [{ a: { anyOf: [{ type: 'null' }, { type: 'string' }] } }],
  }
  assert.deepEqual(plainChoices(schema), schema)
  const three = { anyOf: [{ type: 'string' }, { type: 'null' }, { type: 'integer' }] }
  assert.deepEqual(plainChoices(three), three)
})
