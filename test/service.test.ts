// Service routes (SPEC capability 9, Versioning; CONTRACT §2): liveness, readiness, the
// OpenAPI 3.1 description generated from the route schemas, and the interactive docs.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { registeredRoutes, startServer, startTestServer, type TestServer } from './helpers.ts'

let server: TestServer
let doc: any
before(async (t) => {
  server = await startTestServer(t)
  doc = (await server.request('GET', '/v1/openapi.json')).body
})

type Operation = {
  method: string
  path: string
  op: any
}

function operations(): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      out.push({ method: method.toUpperCase(), path, op })
    }
  }
  return out
}

/** A schema, or the component its `$ref` names (response shapes are components). */
function resolved(schema: any): any {
  const name = /^#\/components\/schemas\/(.+)$/.exec(schema?.$ref ?? '')?.[1]
  return name ? doc.components.schemas[name] : schema
}

const jsonSchema = (part: any) => resolved(part?.content?.['application/json']?.schema)

describe('GET /health', () => {
  test('answers 200 {status: "ok"}', async () => {
    const res = await server.request('GET', '/health')
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { status: 'ok' })
  })
})

describe('GET /ready', () => {
  test('answers 200 with the database (and Redis) checks', async () => {
    const res = await server.request('GET', '/ready')
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, {
      status: 'ready',
      checks: {
        database: 'ok',
        redis: process.env.REDIS_URL ? 'ok' : 'disabled',
        replica: 'disabled',
      },
    })
  })
})

describe('GET /ready when the database is gone', () => {
  test('answers 503 naming the failing check', async () => {
    const broken = await startServer()
    try {
      await broken.deps.database.close()
      const res = await broken.request('GET', '/ready')
      assert.equal(res.status, 503)
      assert.equal(res.body.status, 'unavailable')
      assert.equal(res.body.checks.database, 'failing')
      const health = await broken.request('GET', '/health')
      assert.equal(health.status, 200, 'liveness does not depend on the database')
    } finally {
      // The database is already closed, so closing it again at shutdown may complain.
      await broken.close().catch(() => {})
    }
  })
})

describe('GET /v1/openapi.json', () => {
  test('is OpenAPI 3.1 with version 0.0.0', async () => {
    const res = await server.request('GET', '/v1/openapi.json')
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    assert.match(doc.openapi, /^3\.1\.\d+$/)
    assert.equal(doc.info.version, '0.0.0')
    assert.equal(typeof doc.info.title, 'string')
    assert.equal(doc.components.securitySchemes.userToken.scheme, 'bearer')
    assert.equal(doc.components.securitySchemes.apiKey.scheme, 'bearer')
  })

  test('lists every route the server answers', () => {
    const known = registeredRoutes(server.app).map((r) => `${r.method} ${r.path}`)
    for (const nested of [
      'POST /v1/:tenantSlug/auth/logout-all',
      'PATCH /v1/:tenantSlug/me/password',
      'DELETE /v1/:tenantSlug/me',
      'POST /v1/tenants',
    ]) {
      assert.ok(known.includes(nested), `the route tree was read: ${nested}`)
    }
    const documented = new Set(operations().map((o) => `${o.method} ${o.path}`))
    const missing = registeredRoutes(server.app)
      .filter((r) => r.method !== 'HEAD')
      .filter((r) => !r.path.startsWith('/docs') && r.path !== '/v1/openapi.json')
      // Documents for people, not API operations (README, Hosted pages and admin console):
      // the hosted pages, the console's files and the pages' assets.
      .filter((r) => !/^\/(t\/|console|assets\/)/.test(r.path))
      // The landing page (README, Quick start): a page for a person, not an operation.
      .filter((r) => r.path !== '/')
      // The OpenID provider's protocol endpoints (README, OpenID Connect): described by each
      // issuer's discovery document, not by this API's. find-my-way prints
      // /oidc/:tenantSlug/* as a bare `*` below the root of its tree (`/*` once the landing
      // page's `/` is a route of its own).
      .filter((r) => !/^\/(oidc\/|\.well-known\/oauth-authorization-server\/)/.test(r.path))
      .filter((r) => r.path !== '*' && r.path !== '/*')
      // SCIM 2.0 (README, Provisioning): a protocol of its own, described by its own
      // discovery resources (ServiceProviderConfig, ResourceTypes, Schemas; RFC 7644 §4).
      .filter((r) => !r.path.startsWith('/scim/v2/'))
      // The SSO connections' browser endpoints (README, Enterprise SSO): the OIDC redirect
      // URI and the SAML routes answer redirects and pages, not API operations.
      .filter((r) => !r.path.startsWith('/v1/:tenantSlug/sso/'))
      // The social connections' start and callback (docs/social.md): redirects and pages.
      .filter((r) => !r.path.startsWith('/v1/:tenantSlug/social/'))
      // The SAML SP metadata is XML for the IdP, described by SAML's metadata schema.
      .filter((r) => r.path !== '/v1/:tenantSlug/sso-connections/:id/saml/metadata')
      // The SAML identity provider's endpoints (docs/sso.md): its metadata, SSO service and
      // IdP-initiated start speak SAML's bindings (XML, redirects, pages), not API operations.
      .filter((r) => !r.path.startsWith('/saml/:tenantSlug/'))
      .filter((r) => r.path !== '/v1/:tenantSlug/saml-apps/:id/start')
      .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
      .filter((key) => !documented.has(key))
    assert.deepEqual(missing, [])
    assert.ok(documented.size >= 11)
  })

  test('lists the foundation routes with the statuses of the spec', () => {
    const expected: [string, string, number[]][] = [
      ['GET', '/health', []],
      ['GET', '/ready', [503]],
      ['POST', '/v1/tenants', [400, 409, 429]],
      ['POST', '/v1/{tenantSlug}/auth/signup', [400, 404, 429]],
      // A bad body is a 400 everywhere (CONTRACT §3), so routes with a body list it too.
      ['POST', '/v1/{tenantSlug}/auth/login', [400, 401, 404, 429]],
      ['POST', '/v1/{tenantSlug}/auth/refresh', [400, 401, 404, 429]],
      ['POST', '/v1/{tenantSlug}/auth/logout', [400, 404]],
      ['POST', '/v1/{tenantSlug}/auth/logout-all', [401, 404]],
      ['GET', '/v1/{tenantSlug}/me', [401, 404]],
      ['DELETE', '/v1/{tenantSlug}/me', [401, 404]],
      ['PATCH', '/v1/{tenantSlug}/me/password', [400, 401, 404]],
    ]
    for (const [method, path, statuses] of expected) {
      const op = doc.paths[path]?.[method.toLowerCase()]
      assert.ok(op, `${method} ${path} is documented`)
      const listed = Object.keys(op.responses)
      for (const status of [200, ...statuses]) {
        assert.ok(listed.includes(String(status)), `${method} ${path} lists ${status}`)
      }
    }
  })

  test('documents the request bodies of the foundation routes', () => {
    const body = (method: string, path: string) =>
      jsonSchema(doc.paths[path][method.toLowerCase()].requestBody)
    const signup = body('POST', '/v1/{tenantSlug}/auth/signup')
    assert.deepEqual([...signup.required].sort(), ['email', 'password'])
    assert.equal(signup.properties.email.maxLength, 254)
    assert.equal(signup.properties.password.minLength, 12)
    assert.equal(signup.properties.password.maxLength, 1024)

    const login = body('POST', '/v1/{tenantSlug}/auth/login')
    assert.deepEqual([...login.required].sort(), ['email', 'password'])
    assert.equal(login.properties.password.minLength, 1)
    assert.equal(login.properties.password.maxLength, 1024)
    assert.ok(login.properties.totpCode, 'totpCode')
    assert.ok(login.properties.emailOtpCode, 'emailOtpCode')

    for (const path of ['/v1/{tenantSlug}/auth/refresh', '/v1/{tenantSlug}/auth/logout']) {
      const schema = body('POST', path)
      assert.deepEqual(schema.required, ['refreshToken'])
      assert.equal(schema.properties.refreshToken.minLength, 1)
      assert.equal(schema.properties.refreshToken.maxLength, 1024)
    }

    const password = body('PATCH', '/v1/{tenantSlug}/me/password')
    assert.deepEqual([...password.required].sort(), ['currentPassword', 'newPassword'])
    assert.equal(password.properties.currentPassword.minLength, 1)
    assert.equal(password.properties.newPassword.minLength, 12)
    assert.equal(password.properties.newPassword.maxLength, 1024)

    const tenants = body('POST', '/v1/tenants')
    assert.deepEqual([...tenants.required].sort(), ['admin', 'tenant'])
    assert.deepEqual([...tenants.properties.tenant.required].sort(), ['name', 'slug'])
    assert.equal(tenants.properties.tenant.properties.name.maxLength, 120)
    assert.deepEqual([...tenants.properties.admin.required].sort(), ['email', 'password'])
  })

  test('documents the token envelope and the user as 200 responses', () => {
    const envelope = jsonSchema(doc.paths['/v1/{tenantSlug}/auth/login'].post.responses['200'])
    assert.deepEqual([...envelope.required].sort(), [
      'accessToken',
      'accessTokenExpiresIn',
      'refreshToken',
      'refreshTokenExpiresIn',
      'user',
    ])
    assert.equal(envelope.properties.accessTokenExpiresIn.type, 'integer')
    const withSlug = jsonSchema(doc.paths['/v1/tenants'].post.responses['200'])
    assert.ok(withSlug.required.includes('tenantSlug'))
    const me = jsonSchema(doc.paths['/v1/{tenantSlug}/me'].get.responses['200'])
    for (const field of [
      'id',
      'tenantId',
      'email',
      'status',
      'role',
      'createdAt',
      'lastLoginAt',
      'tenant',
      'totpEnrolled',
    ]) {
      assert.ok(me.properties[field], `/me documents ${field}`)
    }
    const logoutAll = jsonSchema(
      doc.paths['/v1/{tenantSlug}/auth/logout-all'].post.responses['200'],
    )
    assert.deepEqual([...logoutAll.required].sort(), ['count', 'ok'])
  })

  test('every operation has a 200 schema, its error envelope and its parameters', () => {
    for (const { method, path, op } of operations()) {
      const where = `${method} ${path}`
      assert.ok(op.responses['200'], `${where}: 200`)
      if (path === '/v1/{tenantSlug}/audit/export') {
        // CONTRACT §13: the audit export streams NDJSON, one event per line.
        assert.ok(
          op.responses['200'].content?.['application/x-ndjson']?.schema,
          `${where}: 200 NDJSON schema`,
        )
      } else if (path !== '/v1/{tenantSlug}/logo') {
        assert.ok(jsonSchema(op.responses['200']), `${where}: 200 schema`)
      }
      for (const [status, response] of Object.entries<any>(op.responses)) {
        // /ready answers its checks with 503 (CONTRACT §2), not the error envelope.
        if (Number(status) < 400 || path === '/ready') continue
        const schema = jsonSchema(response)
        assert.ok(schema, `${where}: ${status} schema`)
        assert.deepEqual([...schema.required].sort(), ['code', 'message'], `${where}: ${status}`)
        assert.ok(schema.properties.details, `${where}: ${status} details`)
      }
      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        assert.ok(
          op.parameters?.some((p: any) => p.in === 'path' && p.name === name && p.required),
          `${where}: path parameter ${name}`,
        )
      }
      if (path.startsWith('/v1/{tenantSlug}/')) {
        assert.ok(op.responses['404'], `${where}: 404 for an unknown tenant`)
      }
      if (op.security?.length) assert.ok(op.responses['401'], `${where}: 401 for a bearer route`)
      if (op.requestBody) {
        const schema = jsonSchema(op.requestBody)
        assert.equal(schema?.type, 'object', `${where}: body schema`)
        assert.ok(op.responses['400'], `${where}: 400 for a bad body`)
      }
    }
  })

  test('marks the bearer routes as such', () => {
    for (const [method, path] of [
      ['post', '/v1/{tenantSlug}/auth/logout-all'],
      ['get', '/v1/{tenantSlug}/me'],
      ['delete', '/v1/{tenantSlug}/me'],
      ['patch', '/v1/{tenantSlug}/me/password'],
    ]) {
      assert.deepEqual(doc.paths[path][method].security, [{ userToken: [] }], `${method} ${path}`)
    }
    for (const path of ['/v1/{tenantSlug}/auth/login', '/v1/{tenantSlug}/auth/signup']) {
      assert.deepEqual(doc.paths[path].post.security, [])
    }
  })
})

describe('GET /docs', () => {
  test('serves the interactive UI as HTML', async () => {
    const res = await server.request('GET', '/docs')
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(String(res.body), /<html/i)
    assert.match(String(res.body), /swagger/i)
  })
})

test('the API description lists itself among the service routes', async () => {
  const res = await server.request('GET', '/v1/openapi.json')
  const entry = res.body.paths['/v1/openapi.json']?.get
  assert.ok(entry, 'GET /v1/openapi.json is described')
  assert.ok(entry.responses['200'])
})
