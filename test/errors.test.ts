// The error envelope of CONTRACT §3 on every failure: unknown routes, malformed JSON,
// wrong content types, oversized bodies, unknown tenants, validation. Never a stack trace,
// and a refused request changes nothing.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { BODY_LIMIT } from '../src/app.ts'
import { tenantBySlug, tenantSnapshot } from './db.ts'
import { expectError, expectValidation } from './envelope.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from './helpers.ts'

let server: TestServer
let t: TenantFixture
let u: Awaited<ReturnType<typeof signup>>
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  u = await signup(server, t.slug)
})

/** The foundation's tenant routes, each with a body it would accept. */
function tenantRoutes(slug: string) {
  return [
    ['POST', `/v1/${slug}/auth/signup`, { email: uniqueEmail(), password: STRONG_PASSWORD }],
    ['POST', `/v1/${slug}/auth/login`, { email: u.email, password: u.password }],
    ['POST', `/v1/${slug}/auth/refresh`, { refreshToken: u.refreshToken }],
    ['POST', `/v1/${slug}/auth/logout`, { refreshToken: u.refreshToken }],
    ['POST', `/v1/${slug}/auth/logout-all`, undefined],
    ['GET', `/v1/${slug}/me`, undefined],
    ['DELETE', `/v1/${slug}/me`, undefined],
    [
      'PATCH',
      `/v1/${slug}/me/password`,
      { currentPassword: u.password, newPassword: 'x'.repeat(20) },
    ],
  ] as const
}

/** Routes that read a JSON body. */
function bodyRoutes(slug: string) {
  return tenantRoutes(slug).filter(([, , body]) => body !== undefined)
}

// A known path asked with another method is a 405: test/methods.test.ts.
describe('unknown routes', () => {
  test('answer 404 NOT_FOUND in the envelope', async () => {
    for (const [method, path] of [
      // `/` itself is the landing page (issue 20): a neighbour of it stays unknown.
      ['GET', '/index.html'],
      ['GET', '/nope'],
      ['GET', '/v1'],
      ['GET', '/v2/tenants'],
      ['POST', `/v1/${t.slug}/auth/nothing`],
      ['GET', `/v1/${t.slug}/me/password/extra`],
    ]) {
      const res = await server.request(method, path, method === 'GET' ? undefined : {})
      expectError(res, 404, 'route_not_found')
    }
  })

  test('a URL that cannot be decoded is a 400 in the envelope', async () => {
    for (const path of ['/v1/%E0%A4%A/me', `/v1/${t.slug}/%zz`]) {
      const res = await server.request('GET', path)
      expectError(res, 400, 'validation')
    }
  })

  test('an over-long path segment is a 404 in the envelope', async () => {
    const res = await server.request(
      'DELETE',
      `/v1/${t.slug}/users/${'u'.repeat(300)}`,
      undefined,
      {
        token: t.admin.accessToken,
      },
    )
    expectError(res, 404, 'route_not_found')
  })
})

describe('unknown tenants', () => {
  test('every tenant route answers 404 tenant_not_found', async () => {
    for (const slug of ['no-such-tenant', 'x'.repeat(63), 'y'.repeat(300), 'Caps', '%20']) {
      for (const [method, path, body] of tenantRoutes(slug)) {
        const res = await server.request(method, path, body, { token: u.accessToken })
        expectError(res, 404, 'tenant_not_found')
      }
    }
  })

  test('the 404 comes before authentication, validation and body parsing', async () => {
    for (const [method, path] of tenantRoutes('ghost-tenant')) {
      expectError(await server.request(method, path), 404, 'tenant_not_found')
      if (method === 'GET') continue // no body on a GET
      expectError(
        await server.request(method, path, undefined, { raw: '{"broken":' }),
        404,
        'tenant_not_found',
      )
      expectError(
        await server.request(method, path, { email: 7, refreshToken: [] }, { token: 'garbage' }),
        404,
        'tenant_not_found',
      )
      expectError(
        await server.request(method, path, undefined, {
          raw: 'x',
          headers: { 'content-type': 'text/plain' },
        }),
        404,
        'tenant_not_found',
      )
    }
  })

  test('a slug is matched exactly (no case folding, no prefix match)', async () => {
    for (const slug of [t.slug.toUpperCase(), `${t.slug}x`, t.slug.slice(0, -1), ` ${t.slug}`]) {
      const res = await server.request('POST', `/v1/${encodeURIComponent(slug)}/auth/login`, {
        email: u.email,
        password: u.password,
      })
      expectError(res, 404, 'tenant_not_found')
    }
  })
})

describe('bodies that cannot be read', () => {
  test('malformed JSON is 400 malformed_json and changes nothing', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [method, path] of bodyRoutes(t.slug)) {
      for (const raw of ['{', '{"email": "a@b.co",}', "{'email': 'a@b.co'}", 'undefined', '']) {
        const res = await server.request(method, path, undefined, { raw, token: u.accessToken })
        expectError(res, 400, 'malformed_json')
      }
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('other content types are 400 unsupported_media_type and change nothing', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [method, path, body] of bodyRoutes(t.slug)) {
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'text/json',
      ]) {
        const res = await server.request(method, path, undefined, {
          raw: JSON.stringify(body),
          token: u.accessToken,
          headers: { 'content-type': type },
        })
        expectError(res, 400, 'unsupported_media_type')
      }
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('application/json with a charset is accepted', async () => {
    const res = await server.request('POST', `/v1/${t.slug}/auth/login`, undefined, {
      raw: JSON.stringify({ email: u.email, password: u.password }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    assert.equal(res.status, 200)
  })

  test(`bodies over ${BODY_LIMIT} bytes are 400 body_too_large and change nothing`, async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [method, path, body] of bodyRoutes(t.slug)) {
      const padded = JSON.stringify({ ...body, pad: 'x'.repeat(BODY_LIMIT) })
      assert.ok(Buffer.byteLength(padded) > BODY_LIMIT)
      const res = await server.request(method, path, undefined, {
        raw: padded,
        token: u.accessToken,
      })
      expectError(res, 400, 'body_too_large')
    }
    const slug = uniqueSlug()
    const tenant = await server.request('POST', '/v1/tenants', undefined, {
      raw: JSON.stringify({
        tenant: { slug, name: 'x'.repeat(BODY_LIMIT) },
        admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
      }),
    })
    expectError(tenant, 400, 'body_too_large')
    assert.equal(await tenantBySlug(server, slug), undefined)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a body just under the limit is read (the limit is not set too low)', async () => {
    const body = { email: u.email, password: u.password, pad: '' }
    body.pad = 'x'.repeat(BODY_LIMIT - Buffer.byteLength(JSON.stringify(body)) - 10)
    const res = await server.request('POST', `/v1/${t.slug}/auth/login`, body)
    assert.equal(res.status, 200)
  })

  test('a JSON value that is not an object is 400 validation', async () => {
    for (const [method, path] of bodyRoutes(t.slug)) {
      for (const raw of ['[]', '"text"', '42', 'null', 'true']) {
        const res = await server.request(method, path, undefined, { raw, token: u.accessToken })
        expectValidation(res, 'body')
      }
    }
  })

  test('a missing body where one is required is 400 validation', async () => {
    for (const [method, path] of bodyRoutes(t.slug)) {
      expectValidation(await server.request(method, path, undefined, { token: u.accessToken }))
    }
  })
})

describe('validation errors', () => {
  test('list every issue with its path and are never coerced', async () => {
    const res = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: 12345,
      password: 123456789012,
    })
    expectValidation(res)
    const paths = res.body.details.issues.map((i: { path: string }) => i.path).sort()
    assert.deepEqual(paths, ['body.email', 'body.password'])
  })

  test('carry no stack trace or internal detail', async () => {
    const res = await server.request('POST', `/v1/${t.slug}/auth/signup`, { email: [] })
    expectValidation(res)
    const text = JSON.stringify(res.body)
    assert.doesNotMatch(text, /node_modules|\.ts:\d|at [A-Za-z]+ \(|ajv|FST_/)
  })
})

describe('error headers', () => {
  test('errors are JSON, and only 429s carry Retry-After', async () => {
    const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: u.email,
      password: 'wrong-password-0',
    })
    expectError(res, 401, 'invalid_credentials')
    assert.equal(res.headers.get('retry-after'), null)
    assert.equal(res.headers.get('x-powered-by'), null)
  })
})
