// A method a path does not have is 405 METHOD_NOT_ALLOWED with an Allow header listing the
// path's methods (RFC 9110 §15.5.6, issue 19), in the envelope on the API and as a page on
// the hosted pages; before, it was 404 route_not_found (QUERY even 400). Unknown paths stay
// 404, an unknown tenant's paths 404 tenant_not_found, and nothing is read or changed.
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import { before, describe, test } from 'node:test'
import { unchanged } from './db.ts'
import { expectError } from './envelope.ts'
import {
  createTenant,
  type Response,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from './helpers.ts'

let server: TestServer
let t: TenantFixture
let u: Awaited<ReturnType<typeof signup>>
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  u = await signup(server, t.slug)
})

/**
 * One request over node:http, which sends any method (fetch refuses TRACE; QUERY goes out
 * without the content type fetch would add). The answer in the helpers' shape.
 */
function send(
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  const { hostname, port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const type = res.headers['content-type'] ?? ''
        const out = new Headers()
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v)
        }
        resolve({
          status: res.statusCode ?? 0,
          body: type.includes('json') && text ? JSON.parse(text) : text,
          headers: out,
        })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }

function expect405(res: Response, allow: string) {
  expectError(res, 405, 'method_not_allowed')
  assert.equal(res.headers.get('allow'), allow)
}

describe('method-not-allowed: a path asked with a method it lacks', () => {
  test('is 405 in the envelope, Allow listing the path’s methods', async () => {
    const login = `/v1/${t.slug}/auth/login`
    const cases: [string, string, string][] = [
      ['TRACE', login, 'POST'],
      ['PUT', login, 'POST'],
      ['DELETE', login, 'POST'],
      ['GET', login, 'POST'],
      ['OPTIONS', login, 'POST'],
      ['PROPFIND', login, 'POST'],
      ['DELETE', '/health', 'GET, HEAD'],
      ['POST', '/v1/openapi.json', 'GET, HEAD'],
      ['PUT', '/.well-known/jwks.json', 'GET, HEAD'],
      ['GET', '/v1/tenants', 'POST'],
      // PATCH changes a password, POST sets an account's first one (issue 30).
      ['PUT', `/v1/${t.slug}/me/password`, 'PATCH, POST'],
    ]
    for (const [method, path, allow] of cases) expect405(await send(method, path), allow)
    // A parametric path: the methods of /users/:userId, with HEAD beside GET.
    const user = await send('PUT', `/v1/${t.slug}/users/${u.user.id}`)
    expectError(user, 405, 'method_not_allowed')
    const allowed = (user.headers.get('allow') ?? '').split(', ')
    assert.ok(allowed.includes('PATCH') && allowed.includes('DELETE'), allowed.join())
    assert.ok(!allowed.includes('PUT'))
  })

  test('a concrete path beside a templated one is its own path (OpenAPI): PATCH users/import is 405 with Allow POST, before authentication, not routed to users/{userId}', async () => {
    const admin = { authorization: `Bearer ${t.admin.accessToken}`, ...JSON_TYPE }
    await unchanged(server, t.tenantId, async () => {
      for (const headers of [{}, admin]) {
        const res = await send('PATCH', `/v1/${t.slug}/users/import`, '{"role":"Admin"}', headers)
        expect405(res, 'POST')
        expect405(await send('GET', `/v1/${t.slug}/users/import`, undefined, headers), 'POST')
      }
      expect405(await send('OPTIONS', `/v1/${t.slug}/me/passkeys/registration-options`), 'POST')
      expect405(await send('DELETE', `/v1/${t.slug}/me/passkeys/registration-options`), 'POST')
    })
  })

  test('every path of the OpenAPI document asked with a method it lacks is 405 whose Allow is the document’s methods, before authentication', async () => {
    const doc = (await server.request('GET', '/v1/openapi.json')).body as {
      paths: Record<string, Record<string, unknown>>
    }
    const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
    const failures: string[] = []
    let checked = 0
    await unchanged(server, t.tenantId, async () => {
      for (const [template, item] of Object.entries(doc.paths)) {
        const documented = new Set(
          Object.keys(item)
            .map((m) => m.toUpperCase())
            .filter((m) => METHODS.includes(m)),
        )
        if (documented.has('GET')) documented.add('HEAD')
        const allow = [...documented].sort().join(', ')
        const path = template.replace(/\{([^}]+)\}/g, (_m, name: string) =>
          name === 'tenantSlug' ? t.slug : '01a23573-54f2-715e-bda0-dc20387b3dc9',
        )
        for (const method of METHODS.filter((m) => !documented.has(m))) {
          checked++
          const res = await send(method, path)
          const got = `${res.status} Allow: ${res.headers.get('allow')}`
          if (res.status !== 405 || res.headers.get('allow') !== allow) {
            failures.push(`${method} ${template}: ${got}, expected 405 Allow: ${allow}`)
          }
        }
      }
    })
    assert.ok(checked > 200, `${checked} requests`)
    assert.deepEqual(failures, [])
  })

  test('QUERY (with or without a content type) is 405 too', async () => {
    const login = `/v1/${t.slug}/auth/login`
    expect405(await send('QUERY', login), 'POST')
    expect405(await send('QUERY', login, '{}', JSON_TYPE), 'POST')
  })

  test('the body is not read: a malformed one, or a valid login, is 405 and changes nothing', async () => {
    const login = `/v1/${t.slug}/auth/login`
    const credentials = JSON.stringify({ email: u.email, password: u.password })
    await unchanged(server, t.tenantId, async () => {
      expect405(await send('PUT', login, '{"broken":', JSON_TYPE), 'POST')
      expect405(await send('PUT', login, 'x', { 'content-type': 'text/plain' }), 'POST')
      expect405(await send('PATCH', login, credentials, JSON_TYPE), 'POST')
    })
  })

  test('HEAD of a POST route is 405 without a body; HEAD of GET routes still answers', async () => {
    const head = await send('HEAD', `/v1/${t.slug}/auth/login`)
    assert.equal(head.status, 405)
    assert.equal(head.headers.get('allow'), 'POST')
    assert.equal(head.body, '')
    for (const path of ['/health', '/v1/openapi.json', `/v1/${t.slug}/auth/config`]) {
      assert.equal((await send('HEAD', path)).status, 200, path)
    }
  })

  test('an unknown path stays 404 route_not_found, whatever the method', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['TRACE', '/nope'],
      ['PUT', `/v1/${t.slug}/auth/nothing`],
      ['GET', `/v1/${t.slug}/me/password/extra`],
      ['DELETE', '/health/'],
      ['QUERY', '/v1'],
    ]) {
      expectError(await send(method, path), 404, 'route_not_found')
    }
  })

  test('an unknown tenant stays 404 tenant_not_found, whatever the method', async () => {
    for (const slug of ['no-such-tenant-here', 'NOT_A_SLUG']) {
      for (const method of ['PUT', 'TRACE', 'QUERY']) {
        expectError(await send(method, `/v1/${slug}/auth/login`), 404, 'tenant_not_found')
      }
    }
  })

  test('the hosted pages answer a 405 page with Allow', async () => {
    const res = await send('PUT', `/t/${t.slug}/sign-in`)
    assert.equal(res.status, 405)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(res.body, /<h1>This page does not take that request<\/h1>/)
    assert.ok(res.body.includes(t.slug), 'the page carries the workspace’s name')
    assert.ok((res.headers.get('allow') ?? '').split(', ').includes('GET'))
    assert.equal(res.headers.get('content-security-policy') !== null, true)
    // An unknown page and an unknown workspace are still the 404 pages.
    assert.equal((await send('PUT', `/t/${t.slug}/no-such-page`)).status, 404)
    const nowhere = await send('PUT', '/t/no-such-workspace-here/sign-in')
    assert.equal(nowhere.status, 404)
    assert.match(nowhere.body, /No such workspace/)
  })
})
