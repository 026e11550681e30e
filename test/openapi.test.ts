// The OpenAPI document is fit to generate clients from (README, "The OpenAPI document"):
// every operation has a unique camelCase operationId and its security; response shapes
// are named components, referred to with $ref; every request body has examples the body
// schema accepts; every error response lists the `details.reason` values it may carry;
// request schemas say what the service accepts (unknown properties ignored, CONTRACT §8's
// rule on every string, the email rule of src/lib/email.ts): test/fuzz.test.ts sends them.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import * as fc from 'fast-check'
import { isEmail } from '../src/lib/email.ts'
import { REASONS, type Reason } from '../src/lib/errors.ts'
import { expectValidation } from './envelope.ts'
import { createTenant, startTestServer, type TestServer } from './helpers.ts'

let doc: any
let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
  doc = (await server.request('GET', '/v1/openapi.json')).body
})

interface Operation {
  key: string
  path: string
  op: any
}

function operations(): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      out.push({ key: `${method.toUpperCase()} ${path}`, path, op })
    }
  }
  return out
}

function byId(operationId: string): any {
  const found = operations().find((o) => o.op.operationId === operationId)
  assert.ok(found, `operation ${operationId}`)
  return found.op
}

const json = (part: any) => part?.content?.['application/json']

describe('operationIds', () => {
  test('every operation has one, camelCase, unique', () => {
    const seen = new Map<string, string>()
    for (const { key, op } of operations()) {
      assert.match(op.operationId ?? '', /^[a-z][a-zA-Z0-9]*$/, `${key}: operationId`)
      assert.ok(!seen.has(op.operationId), `${key} and ${seen.get(op.operationId)} share one`)
      seen.set(op.operationId, key)
    }
    assert.ok(seen.size >= 40, `${seen.size} operations`)
  })

  test('name the operations clients call most', () => {
    const expected = {
      'POST /v1/{tenantSlug}/auth/login': 'login',
      'POST /v1/{tenantSlug}/auth/refresh': 'refreshSession',
      'POST /v1/{tenantSlug}/auth/logout': 'logout',
      'POST /v1/{tenantSlug}/auth/logout-all': 'logoutAll',
      'POST /v1/{tenantSlug}/auth/signup': 'signup',
      'GET /v1/{tenantSlug}/me': 'getMe',
      'GET /v1/{tenantSlug}/users': 'listUsers',
      'PATCH /v1/{tenantSlug}/users/{userId}': 'updateUser',
      'POST /v1/tenants': 'createTenant',
      'GET /v1/{tenantSlug}/audit': 'listAuditEvents',
    }
    const actual = Object.fromEntries(operations().map((o) => [o.key, o.op.operationId]))
    for (const [key, id] of Object.entries(expected)) assert.equal(actual[key], id, key)
  })
})

describe('security', () => {
  test('every operation lists it, naming only defined schemes', () => {
    const schemes = Object.keys(doc.components.securitySchemes)
    for (const { key, op } of operations()) {
      assert.ok(Array.isArray(op.security), `${key}: security`)
      for (const requirement of op.security) {
        for (const name of Object.keys(requirement)) {
          assert.ok(schemes.includes(name), `${key}: scheme ${name}`)
        }
      }
    }
  })

  test('follows who may call each route (CONTRACT §4)', () => {
    const user = [{ userToken: [] }]
    const userOrKey = [{ userToken: [] }, { apiKey: [] }]
    const expected: [RegExp, unknown[]][] = [
      // Closing the workspace takes an Admin's own token (CONTRACT §9).
      [/^DELETE \/v1\/\{tenantSlug\}\/tenant$/, user],
      // Impersonating a user is a person's act, never a key's (CONTRACT §22)...
      [/^POST \/v1\/\{tenantSlug\}\/users\/\{userId\}\/impersonate$/, user],
      // API keys act as the tenant's admin on users, invites, audit, tenant and logo...
      [/^\w+ \/v1\/\{tenantSlug\}\/(users|invites|audit|tenant)(\/|$)/, userOrKey],
      // ...never on api-keys or the identity-provider credentials.
      [/^\w+ \/v1\/\{tenantSlug\}\/(api-keys|oauth\/idp\/credentials)(\/|$)/, user],
      // The current user (me/* too: CONTRACT §9), logout-all and MFA need a user token.
      [/^\w+ \/v1\/\{tenantSlug\}\/(me(\/.+)?|auth\/logout-all|mfa\/.+)$/, user],
      [/^POST \/v1\/tenants$/, [{}, { tenantCreationToken: [] }]],
      // Email verification serves the signed-in user and a stranger alike (CONTRACT §9).
      [
        /^POST \/v1\/\{tenantSlug\}\/auth\/(request-email-verification|verify-email)$/,
        [{ userToken: [] }, {}],
      ],
      // Signing in, the public logo, accepting an invitation and the service are public.
      [/^\w+ \/v1\/\{tenantSlug\}\/(auth\/(?!logout-all)|logo$|oauth\/idp\/(start|callback))/, []],
      [/^POST \/v1\/invites\/accept$/, []],
      [/^GET \/(health|ready|v1\/openapi\.json)$/, []],
    ]
    let checked = 0
    for (const { key, op } of operations()) {
      const rule = expected.find(([pattern]) => pattern.test(key))
      if (!rule) continue
      assert.deepEqual(op.security, rule[1], key)
      checked++
    }
    assert.ok(checked >= 40, `${checked} operations checked`)
  })

  test('GET /metrics, when METRICS_TOKEN turns it on, takes that token', async (t) => {
    const server = await startTestServer(t, { metricsToken: 'metrics-token-metrics-token' })
    const served = (await server.request('GET', '/v1/openapi.json')).body
    assert.deepEqual(served.paths['/metrics'].get.security, [{ metricsToken: [] }])
    assert.equal(served.components.securitySchemes.metricsToken.scheme, 'bearer')
    assert.equal(doc.components.securitySchemes.metricsToken, undefined, 'only with the route')
  })

  test('defines the bearer schemes a client sends', () => {
    const { userToken, apiKey, tenantCreationToken } = doc.components.securitySchemes
    assert.deepEqual(
      [userToken.type, userToken.scheme, userToken.bearerFormat],
      ['http', 'bearer', 'JWT'],
    )
    assert.deepEqual([apiKey.type, apiKey.scheme], ['http', 'bearer'])
    assert.deepEqual([tenantCreationToken.type, tenantCreationToken.scheme], ['http', 'bearer'])
  })
})

describe('components', () => {
  const NAMED = [
    'User',
    'CurrentUser',
    'Tenant',
    'Logo',
    'TokenEnvelope',
    'TokenEnvelopeWithSlug',
    'ApiKey',
    'CreatedApiKey',
    'Invite',
    'CreatedInvite',
    'AuditEvent',
    'Error',
    'Ok',
    'UserPage',
    'ApiKeyPage',
    'InvitePage',
    'AuditEventPage',
  ]

  test('components.schemas names the response shapes', () => {
    const names = Object.keys(doc.components.schemas)
    for (const name of NAMED) assert.ok(names.includes(name), name)
    assert.ok(!names.some((name) => /^def-\d+$/.test(name)), `unnamed: ${names}`)
    const page = doc.components.schemas.UserPage
    assert.deepEqual(page.properties.items.items, { $ref: '#/components/schemas/User' })
    assert.deepEqual(doc.components.schemas.TokenEnvelope.properties.user, {
      $ref: '#/components/schemas/User',
    })
  })

  test('operations refer to them instead of inlining the shape', () => {
    const expected: Record<string, string> = {
      login: 'TokenEnvelope',
      resetPassword: 'TokenEnvelope',
      refreshSession: 'TokenEnvelope',
      createTenant: 'TokenEnvelopeWithSlug',
      acceptInvite: 'TokenEnvelopeWithSlug',
      getMe: 'CurrentUser',
      listUsers: 'UserPage',
      updateUser: 'User',
      getTenant: 'Tenant',
      updateTenant: 'Tenant',
      listApiKeys: 'ApiKeyPage',
      createApiKey: 'CreatedApiKey',
      listInvites: 'InvitePage',
      createInvite: 'CreatedInvite',
      listAuditEvents: 'AuditEventPage',
      logout: 'Ok',
    }
    for (const [operationId, name] of Object.entries(expected)) {
      const schema = json(byId(operationId).responses['200'])?.schema
      assert.deepEqual(schema, { $ref: `#/components/schemas/${name}` }, operationId)
    }
    // CONTRACT §9: answers of two shapes are a union of components.
    const unions: Record<string, string[]> = {
      signup: ['TokenEnvelope', 'VerificationRequired'],
      verifyEmail: ['CurrentUser', 'TokenEnvelope'],
    }
    for (const [operationId, names] of Object.entries(unions)) {
      const schema = json(byId(operationId).responses['200'])?.schema
      assert.deepEqual(
        schema.anyOf,
        names.map((name) => ({ $ref: `#/components/schemas/${name}` })),
        operationId,
      )
    }
  })

  test('every $ref of the document resolves', () => {
    const refs: string[] = []
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === '$ref' && typeof value === 'string') refs.push(value)
          else walk(value)
        }
      }
    }
    walk(doc)
    assert.ok(refs.length > 100)
    for (const ref of refs) {
      const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1]
      assert.ok(name && doc.components.schemas[name], `${ref} resolves`)
    }
  })
})

describe('request bodies', () => {
  /** Bodies without an example (none now; the test fails once a listed one has one). */
  const WITHOUT_EXAMPLE = new Set<string>()

  test('every one has examples that its schema accepts', () => {
    const ajv = new Ajv({ strict: false, allErrors: true })
    ;(addFormats as any).default ? (addFormats as any).default(ajv) : (addFormats as any)(ajv)
    let bodies = 0
    for (const { key, op } of operations()) {
      if (!op.requestBody) continue
      bodies++
      const media = json(op.requestBody)
      const examples = media.example
        ? [media.example]
        : Object.values<any>(media.examples ?? {}).map((e) => e.value)
      if (WITHOUT_EXAMPLE.has(op.operationId)) {
        assert.equal(examples.length, 0, `${key} has an example now: drop it from the list`)
        continue
      }
      assert.ok(examples.length > 0, `${key}: an example`)
      const validate = ajv.compile(media.schema)
      for (const example of examples) {
        assert.ok(validate(example), `${key}: ${JSON.stringify(validate.errors)}`)
      }
    }
    assert.ok(bodies >= 20, `${bodies} bodies`)
  })

  test('query parameters with a default are optional to the client', () => {
    const limit = byId('listUsers').parameters.find((p: any) => p.name === 'limit')
    assert.equal(limit.schema.default, 50)
    assert.equal(limit.required, false)
  })
})

describe('request schemas say what the service accepts', () => {
  /** Ajv over the document: request schemas with their `#/components/…` references. */
  function compiler() {
    const ajv = new Ajv({ strict: false })
    ;(addFormats as any).default ? (addFormats as any).default(ajv) : (addFormats as any)(ajv)
    ajv.addSchema({ components: doc.components }, 'document')
    return (schema: unknown) =>
      ajv.compile(
        JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"document#/components/')),
      )
  }

  /** Every schema of a request part (body, parameter), named by where it is. */
  function requestSchemas(): [string, any][] {
    const out: [string, any][] = []
    const walk = (where: string, node: any) => {
      if (!node || typeof node !== 'object') return
      // A request schema is written out in place: a reference would hide it from this walk.
      assert.equal(node.$ref, undefined, `${where}: $ref in a request schema`)
      out.push([where, node])
      for (const [key, value] of Object.entries<any>(node.properties ?? {})) {
        walk(`${where}.${key}`, value)
      }
      if (node.items) walk(`${where}[]`, node.items)
      if (node.additionalProperties && typeof node.additionalProperties === 'object') {
        walk(`${where}{}`, node.additionalProperties)
      }
      for (const branch of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) {
        walk(`${where}|`, branch)
      }
    }
    for (const { key, op } of operations()) {
      for (const p of op.parameters ?? []) walk(`${key} ${p.in} ${p.name}`, p.schema)
      const body = json(op.requestBody)?.schema
      if (body) walk(`${key} body`, body)
    }
    return out
  }

  test('an unknown property is ignored: no object refuses one; keys follow CONTRACT §8', () => {
    const compile = compiler()
    let objects = 0
    for (const [where, schema] of requestSchemas()) {
      if (schema.type !== 'object') continue
      objects++
      assert.equal(schema.additionalProperties, undefined, `${where}: additionalProperties`)
      const validate = compile({ propertyNames: schema.propertyNames })
      assert.ok(validate({ any: 1, 'ü💥': 2 }), `${where}: keys`)
      assert.ok(!validate({ 'k\u0000': 1 }) && !validate({ '\ud800': 1 }), `${where}: bad keys`)
    }
    assert.ok(objects >= 30, `${objects} objects`)
    // What a schema cannot say without giving generated clients an index signature.
    assert.match(doc.info.description, /does not name is ignored/)
  })

  test('every string a request carries refuses U+0000 and lone surrogates (CONTRACT §8)', () => {
    const compile = compiler()
    let strings = 0
    for (const [where, schema] of requestSchemas()) {
      if (schema.type !== 'string') continue
      strings++
      assert.ok(schema.pattern || schema.format || schema.enum || 'const' in schema, where)
      const validate = compile(schema)
      for (const bad of ['\u0000', 'a\u0000b', '\ud800', 'x\udc00', 'a\ud83d']) {
        assert.ok(!validate(bad), `${where} allows ${JSON.stringify(bad)}`)
      }
    }
    assert.ok(strings >= 60, `${strings} strings`)
    // The pattern lets everything else through, astral characters included.
    const free = byId('login').requestBody.content['application/json'].schema.properties.password
    assert.ok(compile(free)('pässwörd 💥 \t\u200b\uffff'), 'the rest of Unicode')
  })

  /**
   * A social connection's `claims.email` (CONTRACT §19) names where the address sits in a
   * provider's profile (`data.user.email`): a path, not an address (in a PATCH, a branch of
   * `claims`, which null clears).
   */
  const isClaimPath = (where: string) => / body\.claims\|?\.email$/.test(where)

  test('every email field of every operation carries the service’s rule: dotless domains, U+0000 and lone surrogates refused (issue 36)', () => {
    const compile = compiler()
    const carriers = new Set<string>()
    for (const [where, schema] of requestSchemas()) {
      if (!/[. ]email$/.test(where) || schema.type !== 'string' || isClaimPath(where)) continue
      carriers.add(where.split(' ').slice(0, 2).join(' '))
      assert.equal(schema.format, undefined, `${where}: format ${schema.format}`)
      const validate = compile(schema)
      assert.ok(validate('ada@example.com'), `${where} refuses a good address`)
      // An import row's address is judged per row (CONTRACT §14: the row is `error` with
      // `invalid_email`, the others are imported), so its schema holds only §8's rule.
      const perRow = where.includes('body.users[]')
      if (perRow) assert.match(schema.description, /`invalid_email`/, where)
      for (const bad of [
        ...(perRow ? [] : ['ada@localhost', 'a@io', 'ada@example']),
        'ada@exa\u0000mple.com',
        'ada\ud800@example.com',
        'ada@example.com\udc00',
      ]) {
        assert.ok(!validate(bad), `${where} allows ${JSON.stringify(bad)}`)
      }
    }
    // The operations the fuzzer named, and every other that takes an address.
    for (const path of [
      'POST /v1/tenants',
      'POST /v1/{tenantSlug}/auth/signup',
      'POST /v1/{tenantSlug}/auth/login',
      'POST /v1/{tenantSlug}/auth/request-login-code',
      'POST /v1/{tenantSlug}/auth/verify-login-code',
      'POST /v1/{tenantSlug}/auth/request-email-otp',
      'POST /v1/{tenantSlug}/auth/request-password-reset',
      'POST /v1/{tenantSlug}/auth/reset-password',
      'POST /v1/{tenantSlug}/auth/totp/initial-enroll',
      'POST /v1/{tenantSlug}/auth/totp/initial-verify',
      'POST /v1/{tenantSlug}/auth/passkey/options',
      'POST /v1/{tenantSlug}/invites',
      'POST /v1/{tenantSlug}/users/import',
    ]) {
      assert.ok(carriers.has(path), `${path} has an email field`)
    }
    assert.ok(carriers.size >= 15, [...carriers].join('\n'))
  })

  test('the service refuses what the document refuses: a dotless address is 400 validation on every operation whose email field says so', async () => {
    const tenant = await createTenant(server)
    let sent = 0
    for (const [where, schema] of requestSchemas()) {
      if (!/[. ]email$/.test(where) || schema.type !== 'string' || where.includes('[]')) continue
      if (isClaimPath(where)) continue
      const [method, template, , field] = where.split(/ |(?<=body)\./)
      // Any other path parameter (an organization's id) is a well-formed unknown one.
      const path = template.replace('{tenantSlug}', tenant.slug).replace(/\{\w+\}/g, randomUUID())
      // body.email, or body.admin.email: the address where the schema has it.
      const keys = field.split('.')
      let body: Record<string, unknown> = { [keys.at(-1) as string]: 'ada@localhost' }
      for (const key of keys.slice(0, -1).reverse()) body = { [key]: body }
      const res = await server.request(method, path, body, { token: tenant.admin.accessToken })
      expectValidation(res, `body.${field}`)
      sent++
    }
    assert.ok(sent >= 13, `${sent} operations`)
  })

  test("an email is the service's own rule, not format: email", () => {
    const schema = byId('login').requestBody.content['application/json'].schema.properties.email
    assert.equal(schema.format, undefined)
    const validate = compiler()(schema)
    const cases: [string, boolean][] = [
      ['ada@example.com', true],
      [' Ada@Example.COM\u3000', true],
      ['josé@exämple.com', true],
      ['a@io', false],
      ['a b@example.com', false],
      ['a\u200b@example.com', false],
      ['a@example.com\u0000', false],
      ['\tada@example.com', false],
      [`${'a'.repeat(65)}@example.com`, false],
      [`a@${'b'.repeat(250)}.io`, false],
    ]
    for (const [email, expected] of cases) {
      assert.equal(validate(email), expected, JSON.stringify(email))
      assert.equal(isEmail(email), expected, `isEmail(${JSON.stringify(email)})`)
    }
    // The document and the service's function agree on any text.
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 30 }),
      fc
        .tuple(fc.string({ unit: 'binary', maxLength: 8 }), fc.emailAddress())
        .map(([a, b]) => a + b),
      fc
        .tuple(fc.emailAddress(), fc.constantFrom('@@', '\u00ad@', '@.', ' @', '@a\u202e'))
        .map(([e, at]) => e.replace('@', at)),
    )
    fc.assert(
      fc.property(text, (email) => validate(email) === isEmail(email)),
      { numRuns: 2000 },
    )
  })
})

describe('error responses', () => {
  /** Reasons a route answers with another status than the catalogue's (AppError status). */
  const OTHER_STATUS = new Set([
    'signup 400 password_login_disabled',
    // CONTRACT §9: the reset routes refuse a PasswordlessOnly tenant with 403.
    'requestPasswordReset 403 password_login_disabled',
    'resetPassword 403 password_login_disabled',
    // A first password (POST me/password) is refused as the reset refuses one.
    'setPassword 403 password_login_disabled',
    // CONTRACT §18: an invitation to an organization that is not pending is 400
    // invalid_invite; accepting one with a password is auth/signup's own refusal.
    'acceptOrganizationInvitation 400 invalid_invite',
    'acceptOrganizationInvitation 400 password_login_disabled',
    'revokeOrganizationInvitation 400 invalid_invite',
    // CONTRACT §18: an organization token needs a session with a second factor.
    'refreshSession 403 mfa_required',
  ])

  test('every one is the Error component and lists its reasons from the catalogue', () => {
    for (const { key, path, op } of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400 || path === '/ready') continue
        assert.deepEqual(json(response)?.schema, { $ref: '#/components/schemas/Error' }, key)
        const reasons: Reason[] = response['x-reasons']
        assert.ok(reasons?.length > 0, `${key} ${status}: x-reasons`)
        for (const reason of reasons) {
          assert.ok(reason in REASONS, `${key} ${status}: ${reason} is in the catalogue`)
          const usual = REASONS[reason][0]
          const exception = OTHER_STATUS.has(`${op.operationId} ${status} ${reason}`)
          assert.ok(usual === Number(status) || exception, `${key}: ${reason} is a ${usual}`)
          assert.ok(response.description.includes(`\`${reason}\``), `${key} ${status}: described`)
        }
      }
    }
  })

  test('name what a route itself refuses, and what every route of its kind shares', () => {
    const reasons = (operationId: string, status: number) =>
      byId(operationId).responses[String(status)]['x-reasons']
    assert.deepEqual(reasons('login', 401), [
      'invalid_credentials',
      'account_suspended',
      'password_login_disabled',
      'mfa_required',
      'invalid_mfa_code',
    ])
    assert.ok(reasons('signup', 400).includes('password_too_weak'))
    assert.ok(reasons('signup', 400).includes('malformed_json'))
    assert.ok(reasons('getMe', 401).includes('token_expired'))
    assert.ok(reasons('getMe', 401).includes('user_token_required'))
    assert.ok(reasons('listUsers', 401).includes('invalid_api_key'))
    assert.deepEqual(reasons('listApiKeys', 403), [
      'admin_required',
      'permission_required',
      'api_key_not_allowed',
    ])
    assert.deepEqual(reasons('createTenant', 409), ['slug_taken'])
    assert.deepEqual(reasons('refreshSession', 404), ['tenant_not_found'])
    const tooMany = byId('refreshSession').responses['429']
    assert.deepEqual(tooMany['x-reasons'], ['rate_limited'])
    assert.ok(tooMany.headers['Retry-After'], '429: Retry-After')
  })
})
