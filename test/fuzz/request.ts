// One generated request for one operation of the OpenAPI document: its path parameters,
// query string, credentials, headers and body, as data (fixture values still symbolic),
// and `materialize`, which turns that into the exact bytes sent.
import * as fc from 'fast-check'
import { headerValue, hostileString, tainted, type UrlEncoding, urlPart } from './strings.ts'
import { type Schema, value } from './values.ts'
import type { WireRequest } from './wire.ts'
import { Ref, ref, type World } from './world.ts'

export interface Operation {
  /** `POST /v1/{tenantSlug}/auth/login`: the test's name and FUZZ_ONLY's subject. */
  key: string
  operationId: string
  /** The security requirements of the operation (`[]`: public). */
  security: Record<string, unknown>[]
  /** The documented examples of its JSON body. */
  examples: unknown[]
  method: string
  path: string
  params: { name: string; in: 'path' | 'query'; schema: Schema }[]
  body?: Schema
  statuses: number[]
}

type Body =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown; type: string }
  /** Latin-1 text: one character per byte, so invalid UTF-8 can be sent. */
  | { kind: 'raw'; bytes: string; type?: string }
  /** Long bodies, kept short in reports: each text repeated so many times, in turn. */
  | { kind: 'pattern'; parts: [string, number][]; type: string }

export interface RequestSpec {
  path: Record<string, [unknown, UrlEncoding]>
  query: [unknown, unknown, UrlEncoding][] | string
  authorization?: unknown
  userAgent?: string
  forwardedFor?: string
  body: Body
}

const encoding = fc.oneof(
  { weight: 19, arbitrary: fc.constant<UrlEncoding>('escaped') },
  { weight: 1, arbitrary: fc.constant<UrlEncoding>('raw') },
)

const SLUGS = ['v1', 'tenants', 'invites', 'health', 'docs', 'Caps', 'x'.repeat(63), 'y'.repeat(64)]

function pathValue(name: string, schema: Schema): fc.Arbitrary<unknown> {
  if (name !== 'tenantSlug') return value(schema, name)
  return fc.oneof(
    { weight: 40, arbitrary: fc.constant(ref('slug')) },
    { weight: 2, arbitrary: fc.constant(ref('otherSlug')) },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}[a-z0-9]$/) },
    { weight: 1, arbitrary: fc.constantFrom(...SLUGS) },
    { weight: 3, arbitrary: hostileString },
    { weight: 2, arbitrary: tainted(fc.constant(ref('slug'))) },
  )
}

const RAW_QUERIES = [
  '',
  '&&',
  '=',
  '%',
  'a=%zz',
  'a=%00',
  '%00=1',
  'a=%ED%A0%80',
  'limit',
  'a[b]=c',
]

function query(op: Operation): fc.Arbitrary<RequestSpec['query']> {
  const declared = op.params.filter((p) => p.in === 'query')
  const pairs = fc.tuple(
    ...declared.map((p) =>
      fc.option(fc.tuple(fc.constant(p.name), value(p.schema, p.name), encoding), { freq: 2 }),
    ),
  )
  const unknown = fc.tuple(
    fc.oneof(fc.constantFrom('limit', 'cursor', '__proto__'), hostileString),
    hostileString,
    encoding,
  )
  const extra = fc.oneof(
    { weight: 6, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(unknown, { minLength: 1, maxLength: 2 }) },
  )
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc
        .tuple(pairs, extra)
        .map(([some, more]) => [
          ...(some.filter(Boolean) as [unknown, unknown, UrlEncoding][]),
          ...more,
        ]),
    },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_QUERIES) },
  )
}

const GARBAGE_AUTH = [
  'Bearer',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  'bearer x.y.z',
  'Bearer ak_live_',
  `Bearer ak_test_${'A'.repeat(43)}`,
  'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
  'Bearer a b',
  `Bearer ${'a'.repeat(9000)}`,
]

// fast-check's bias favours the first choice of a oneof: the likeliest to go deep comes first.
const authorization: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom('adminToken', 'memberToken', 'apiKey')
      .map((k) => new Ref(k, 'Bearer ')),
  },
  { weight: 2, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('otherToken', 'otherApiKey', 'expiredToken')
      .map((k) => new Ref(k, 'Bearer ')),
  },
  { weight: 1, arbitrary: fc.constantFrom(...GARBAGE_AUTH) },
  { weight: 1, arbitrary: hostileString.map((s) => `Bearer ${s}`) },
  {
    weight: 1,
    arbitrary: tainted(fc.constant(ref('adminToken'))).map((r) => {
      const t = r as Ref
      return new Ref(t.key, `Bearer ${t.before}`, t.after)
    }),
  },
)

const userAgent = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 8, arbitrary: fc.constantFrom('Mozilla/5.0 (X11; Linux x86_64)', 'curl/8.5.0') },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  // Over the 16 KiB of headers Node reads: 431 (CONTRACT §8).
  { weight: 1, arbitrary: fc.constant('x'.repeat(17_000)) },
)

const forwardedFor = fc.oneof(
  { weight: 9, arbitrary: fc.ipV4() },
  {
    weight: 1,
    arbitrary: fc.oneof(fc.ipV6(), fc.constantFrom('unknown', '1.2.3.4, 5.6.7.8'), hostileString),
  },
)

const MALFORMED = [
  '{',
  '{"a":',
  '[',
  'nul',
  '{"email":"a@b.co",}',
  "{'email':'a@b.co'}",
  '{"a":"\\uZZZZ"}',
  '{"a":1}{"b":2}',
  '1e999999',
  '{"__proto__":{"role":"Admin"},"constructor":{"prototype":{"x":1}}}',
  '{"email":"a@b.co","email":1}',
  '\u00ef\u00bb\u00bf{}',
  '{"email":"\u00ff\u00fe@b.co"}',
  '\u0000',
  '[]',
  '"text"',
  '42',
  'null',
]

const TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'application/jsonx',
  'application/json;;',
  '',
]

function body(op: Operation): fc.Arbitrary<Body> {
  const json = (schema: Schema | undefined) =>
    fc
      .tuple(
        schema ? value(schema) : fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom('application/json', 'application/json; charset=utf-8'),
      )
      .map(([v, type]): Body => ({ kind: 'json', value: v, type }))
  const raw: fc.Arbitrary<Body> = fc.oneof(
    fc
      .constantFrom(...MALFORMED)
      .map((bytes): Body => ({ kind: 'raw', bytes, type: 'application/json' })),
    fc
      .tuple(
        fc.constantFrom(...TYPES),
        fc.option(fc.constantFrom('{}', '{"email":"a@b.co"}', 'x=1'), { nil: undefined }),
      )
      .map(
        ([type, bytes]): Body => ({ kind: 'raw', bytes: bytes ?? '{}', type: type || undefined }),
      ),
    // Deep nesting, and a body over the 64 KiB limit.
    fc.tuple(fc.constantFrom(100, 5_000, 12_000), fc.nat(2)).map(([n, shape]): Body => {
      const parts: [string, number][][] = [
        [
          ['[', n],
          [']', n],
        ],
        [
          ['{"a":', n],
          ['1', 1],
          ['}', n],
        ],
        [
          ['{"a":"', 1],
          ['x', 70_000],
          ['"}', 1],
        ],
      ]
      return { kind: 'pattern', parts: parts[shape], type: 'application/json' }
    }),
  )
  const none = fc.constant<Body>({ kind: 'none' })
  if (op.body) {
    return fc.oneof(
      { weight: 12, arbitrary: json(op.body) },
      { weight: 1, arbitrary: none },
      { weight: 2, arbitrary: raw },
    )
  }
  if (op.method === 'GET')
    return fc.oneof({ weight: 12, arbitrary: none }, { weight: 1, arbitrary: raw })
  return fc.oneof(
    { weight: 6, arbitrary: none },
    { weight: 1, arbitrary: json(undefined) },
    { weight: 1, arbitrary: raw },
  )
}

export function requestSpec(op: Operation): fc.Arbitrary<RequestSpec> {
  const path = fc.record(
    Object.fromEntries(
      op.params
        .filter((p) => p.in === 'path')
        .map((p) => [p.name, fc.tuple(pathValue(p.name, p.schema), encoding)]),
    ),
  ) as fc.Arbitrary<RequestSpec['path']>
  return fc.record(
    { path, query: query(op), authorization, userAgent, forwardedFor, body: body(op) },
    { requiredKeys: ['path', 'query', 'forwardedFor', 'body'] },
  )
}

/** A generated value as URL text: strings as they are, anything else as JSON. */
function text(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v))
}

/** The exact request for `spec`, fixture values read from `world` now. */
export function materialize(op: Operation, spec: RequestSpec, world: World): WireRequest {
  let target = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const [v, how] = spec.path[name]
    // Even raw, a `/`, `?` or `#` would address another route (or none): escaped.
    return urlPart(text(world.resolve(v)), how)
      .replace(/[\r\n]/g, '')
      .replace(/[/?#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  })
  if (typeof spec.query === 'string') {
    if (spec.query) target += `?${spec.query}`
  } else if (spec.query.length > 0) {
    const pairs = spec.query.map(([k, v, how]) => {
      const values = Array.isArray(v) ? v : [v]
      return values
        .map(
          (one) =>
            `${urlPart(text(world.resolve(k)), how)}=${urlPart(text(world.resolve(one)), how)}`,
        )
        .join('&')
    })
    target += `?${pairs.join('&').replace(/[\r\n]/g, '')}`
  }
  const headers: [string, string][] = [['x-forwarded-for', headerValue(spec.forwardedFor ?? '')]]
  const auth = world.resolve(spec.authorization)
  if (typeof auth === 'string') headers.push(['authorization', headerValue(auth)])
  if (spec.userAgent !== undefined) headers.push(['user-agent', headerValue(spec.userAgent)])
  let payload: Buffer | undefined
  const b = spec.body
  if (b.kind === 'json') {
    payload = Buffer.from(JSON.stringify(world.resolve(b.value)) ?? 'null', 'utf8')
    headers.push(['content-type', b.type])
  } else if (b.kind === 'pattern') {
    payload = Buffer.from(b.parts.map(([chunk, n]) => chunk.repeat(n)).join(''), 'latin1')
    headers.push(['content-type', b.type])
  } else if (b.kind === 'raw') {
    payload = Buffer.from(b.bytes, 'latin1')
    if (b.type !== undefined) headers.push(['content-type', b.type])
  }
  return { method: op.method, target, headers, body: payload }
}
