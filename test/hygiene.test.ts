// Input hygiene (CONTRACT §8). Each case here answered 500 before the rule existed: a NUL
// or a lone surrogate reached PostgreSQL (which stores neither), a slug was looked up
// whatever it held, a year-0000 date reached a query. Now each is a 400 `validation` (a 404
// `tenant_not_found` for a slug) with the envelope, and nothing is written.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { and, eq } from '../src/db/orm.ts'
import { apiKeys, auditEvents, tenants, users } from '../src/db/schema.ts'
import { tenantSnapshot, unchanged } from './db.ts'
import { expectError } from './envelope.ts'
import {
  createTenant,
  rawRequest,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from './helpers.ts'

const NUL = '\u0000'
const LONE_HIGH = '\ud800'
const LONE_LOW = '\udc00'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const admin = () => t.admin.accessToken as string

function expectBadString(res: { status: number; body: any; headers: Headers }, path: string) {
  expectError(res, 400, 'validation')
  assert.equal(res.body.details.issues[0].path, path, JSON.stringify(res.body))
}

describe('a NUL or a lone surrogate in a string is 400 validation', () => {
  test('a slug that breaks the slug rule is 404 tenant_not_found, without a lookup', async () => {
    for (const slug of [
      '%00',
      `${t.slug}%00`,
      'ABC',
      '-abc',
      'a_b',
      '%F0%9F%9A%80',
      'x'.repeat(64),
    ]) {
      const res = await server.request('POST', `/v1/${slug}/auth/login`, {
        email: uniqueEmail(),
        password: 'whatever-password',
      })
      expectError(res, 404, 'tenant_not_found')
    }
    // A lone surrogate cannot be written in a URL, only bytes that decode to none: such a
    // URL is not valid, whichever segment holds it.
    const undecodable = await server.request('POST', '/v1/%ED%A0%80/auth/login', {})
    expectError(undecodable, 400, 'validation')
    // Unauthenticated GETs too.
    expectError(await server.request('GET', '/v1/%00/auth/config'), 404, 'tenant_not_found')
    expectError(await server.request('GET', '/v1/%00/logo'), 404, 'tenant_not_found')
  })

  test('tenant creation: a NUL or lone surrogate in the name creates nothing', async () => {
    for (const name of [`Acme${NUL}`, `Acme${LONE_HIGH}`, `${LONE_LOW}Acme`]) {
      const slug = uniqueSlug()
      const res = await server.request('POST', '/v1/tenants', {
        tenant: { slug, name },
        admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
      })
      expectBadString(res, 'body.tenant.name')
      const rows = await server.deps.db.select().from(tenants).where(eq(tenants.slug, slug))
      assert.equal(rows.length, 0)
    }
    // A well-formed astral character (a surrogate pair) is text like any other.
    const slug = uniqueSlug()
    const ok = await server.request('POST', '/v1/tenants', {
      tenant: { slug, name: 'Acme \u{1F680}' },
      admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const [row] = await server.deps.db.select().from(tenants).where(eq(tenants.slug, slug))
    assert.equal(row.name, 'Acme \u{1F680}')
  })

  test('an API key name, the IdP clientId and a tenant rename change nothing', async () => {
    await unchanged(server, t.tenantId, async () => {
      const key = await server.request(
        'POST',
        `/v1/${t.slug}/api-keys`,
        { name: `ci${NUL}`, environment: 'live' },
        { token: admin() },
      )
      expectBadString(key, 'body.name')
      const idp = await server.request(
        'PUT',
        `/v1/${t.slug}/oauth/idp/credentials`,
        { clientId: `client${NUL}`, clientSecret: 'secret' },
        { token: admin() },
      )
      expectBadString(idp, 'body.clientId')
      const rename = await server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { name: `Name${LONE_HIGH}` },
        { token: admin() },
      )
      expectBadString(rename, 'body.name')
    })
    const keys = await server.deps.db.select().from(apiKeys).where(eq(apiKeys.tenantId, t.tenantId))
    assert.equal(keys.length, 0)
  })

  test('the audit search and other query strings', async () => {
    for (const search of ['%00', 'abc%00def']) {
      const res = await server.request('GET', `/v1/${t.slug}/audit?search=${search}`, undefined, {
        token: admin(),
      })
      expectBadString(res, 'querystring.search')
    }
  })

  test('an email at login: 400, before any lookup or audit row', async () => {
    const user = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      for (const email of [`${user.email}${NUL}`, `a${LONE_HIGH}@example.com`]) {
        const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
          email,
          password: user.password,
        })
        expectBadString(res, 'body.email')
      }
    })
  })

  test('signup with a lone surrogate ending the email: 400, no account (found by the fuzzer)', async () => {
    // PGlite used to store it as U+FFFD and answer 200; PostgreSQL answered 500.
    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
        email: `a-${Date.now()}@example.com${LONE_LOW}`,
        password: STRONG_PASSWORD,
      })
      expectBadString(res, 'body.email')
    })
  })

  test('a key of a JSON object, and a string deep in an array', async () => {
    const res = await server.request('POST', '/v1/tenants', {
      tenant: { slug: uniqueSlug(), name: 'Acme', [`x${NUL}`]: 1 },
      admin: { email: uniqueEmail(), password: STRONG_PASSWORD },
    })
    expectBadString(res, 'body.tenant')
    const raw = '{"email":"a@example.com","password":"p","extra":[1,["\\ud800"]]}'
    const nested = await server.request('POST', `/v1/${t.slug}/auth/login`, undefined, { raw })
    expectBadString(nested, 'body.extra.1.0')
  })

  test('a body nested 12,000 deep is 400 validation, not a 500 (found by the fuzzer)', async () => {
    const deep = `${'['.repeat(12_000)}${']'.repeat(12_000)}`
    for (const path of [`/v1/${t.slug}/auth/refresh`, '/v1/invites/accept', '/v1/tenants']) {
      const res = await server.request('POST', path, undefined, { raw: deep })
      expectError(res, 400, 'validation')
    }
    // Nesting within the bound is only an unknown property, dropped as usual.
    const user = await signup(server, t.slug)
    const shallow = JSON.parse(`${'['.repeat(30)}${']'.repeat(30)}`)
    const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: user.email,
      password: user.password,
      extra: shallow,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  test('a path parameter other than the slug', async () => {
    const res = await server.request('DELETE', `/v1/${t.slug}/users/%00`, undefined, {
      token: admin(),
    })
    expectBadString(res, 'params.userId')
  })

  test('a User-Agent with a NUL is refused by the HTTP parser, with the envelope', async () => {
    const answer = await rawRequest(
      server.url,
      `GET /v1/${t.slug}/auth/config HTTP/1.1\r\nHost: x\r\nUser-Agent: a\u0000b\r\nConnection: close\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 400 /)
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
    assert.equal(body.code, 'BAD_REQUEST')
    assert.equal(body.details.reason, 'validation')
  })

  test('a User-Agent of Latin-1 bytes is stored as text, not refused', async () => {
    const user = await signup(server, t.slug)
    const body = JSON.stringify({ email: user.email, password: 'wrong-password-1' })
    const answer = await rawRequest(
      server.url,
      `POST /v1/${t.slug}/auth/login HTTP/1.1\r\nHost: x\r\nUser-Agent: caf\u00e9\u00ff\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
        `Connection: close\r\n\r\n${body}`,
      'latin1',
    )
    assert.match(answer, /^HTTP\/1\.1 401 /)
    const rows = await server.deps.db
      .select({ userAgent: auditEvents.userAgent })
      .from(auditEvents)
      .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'UserLoginFailed')))
    assert.ok(rows.some((r) => r.userAgent === 'caf\u00e9\u00ff'))
  })
})

describe('a query string that is not UTF-8 percent-encoding is 400 (CONTRACT §16)', () => {
  // Each with the issue path that names the parameter holding the bad escape.
  const NAMED: [string, string][] = [
    ['x=%FF', 'querystring.x'],
    ['x=%E0%A4', 'querystring.x'],
    ['x=%zz', 'querystring.x'],
    ['x=100%', 'querystring.x'],
    ['search=%ED%A0%80', 'querystring.search'],
    ['a=1&b=%C3', 'querystring.b'],
    ['%FF=1', 'querystring'],
    ['cursor=%%%', 'querystring.cursor'],
  ]
  const BAD = NAMED.map(([query]) => query)

  test('on API routes: the validation envelope, and a login with one changes nothing', async () => {
    for (const [query, issuePath] of NAMED) {
      for (const path of ['/health', `/v1/${t.slug}/auth/config`, `/v1/${t.slug}/audit`]) {
        const res = await server.request('GET', `${path}?${query}`, undefined, { token: admin() })
        expectBadString(res, issuePath)
        assert.match(res.body.details.issues[0].message, /percent-encoding/)
      }
    }
    const user = await signup(server, t.slug)
    const res = await unchanged(server, t.tenantId, () =>
      server.request('POST', `/v1/${t.slug}/auth/login?x=%FF`, {
        email: user.email,
        password: user.password,
      }),
    )
    expectBadString(res, 'querystring.x')
    // Well-formed escapes, multi-byte ones included, still pass.
    const fine = await server.request(
      'GET',
      `/v1/${t.slug}/audit?search=caf%C3%A9%20%F0%9F%9A%80`,
      undefined,
      {
        token: admin(),
      },
    )
    assert.equal(fine.status, 200, JSON.stringify(fine.body))
  })

  test('on the hosted pages: an HTML 400 page', async () => {
    for (const query of BAD) {
      const res = await server.request('GET', `/t/${t.slug}/sign-in?${query}`)
      assert.equal(res.status, 400, query)
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
      assert.match(res.body, /<h1>This request could not be read<\/h1>/)
    }
    assert.equal((await server.request('GET', `/t/${t.slug}/sign-in?next=%2Faccount`)).status, 200)
  })
})

describe('date-time query parameters lie in 1970..9999', () => {
  test('the audit list refuses dates PostgreSQL or JavaScript cannot hold', async () => {
    for (const before of [
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '1970-01-01T00:00:00%2B01:00',
    ]) {
      const res = await server.request('GET', `/v1/${t.slug}/audit?before=${before}`, undefined, {
        token: admin(),
      })
      expectError(res, 400, 'validation')
    }
    for (const before of ['1970-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
      const res = await server.request('GET', `/v1/${t.slug}/audit?before=${before}`, undefined, {
        token: admin(),
      })
      assert.equal(res.status, 200, `${before}: ${JSON.stringify(res.body)}`)
    }
  })

  test('an API key expiry in year 0000 is refused, not a 500', async () => {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/api-keys`,
      { name: 'old', environment: 'live', expiresAt: '0000-06-01T00:00:00Z' },
      { token: admin() },
    )
    expectError(res, 400, 'validation')
  })
})

describe('emails are NFC, and control or format characters are refused', () => {
  const nfc = (local: string) => `${local}-${Math.random().toString(36).slice(2, 8)}@example.com`

  test('NFC and NFD spellings are one account, stored as NFC', async () => {
    const email = nfc('jos\u00e9')
    const decomposed = email.normalize('NFD')
    assert.notEqual(email, decomposed)
    const first = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: decomposed,
      password: STRONG_PASSWORD,
    })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.user.email, email, 'stored and shown in NFC')
    const second = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email,
      password: STRONG_PASSWORD,
    })
    expectError(second, 400, 'email_taken')
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: email.toUpperCase(),
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200, 'the NFC spelling, any case, signs in to the NFD signup')
    const rows = await server.deps.db
      .select({ email: users.email, normalized: users.emailNormalized })
      .from(users)
      .where(and(eq(users.tenantId, t.tenantId), eq(users.emailNormalized, email)))
    assert.deepEqual(rows, [{ email, normalized: email }])
  })

  test('zero-width, bidirectional and BOM characters: 400 validation, no account', async () => {
    const before = await tenantSnapshot(server, t.tenantId)
    for (const email of [
      'a\u200b@example.com', // zero-width space
      'a\u200d@example.com', // zero-width joiner
      '\u202eelpmaxe@a.com', // right-to-left override
      'a@exam\u2066ple.com', // left-to-right isolate
      '\ufeffa@example.com', // BOM
      'a\u00ad@example.com', // soft hyphen
      'a@example.com\u0085', // next line (a control)
      '\ta@example.com', // a tab (a control) around the address
    ]) {
      for (const route of ['auth/signup', 'auth/login']) {
        const res = await server.request('POST', `/v1/${t.slug}/${route}`, {
          email,
          password: STRONG_PASSWORD,
        })
        expectError(res, 400, 'validation')
      }
      const invite = await server.request(
        'POST',
        `/v1/${t.slug}/invites`,
        { email, role: 'Member' },
        { token: admin() },
      )
      expectError(invite, 400, 'validation')
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})
