// Dynamic client registration (CONTRACT §11; RFC 7591): closed unless the tenant's
// `dynamicClientRegistration` is on (not in discovery, and the endpoint answers what
// oidc-provider answers at a path it does not serve); open, a client registers itself as a
// third-party application of that tenant only, listed by the admin API as dynamic and
// audited; metadata outside the admin's rules is refused with RFC 7591's errors and
// nothing created; every registration takes a point of RATE_LIMIT_CLIENT_REGISTRATION per IP.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { issuerOf, serverFetch } from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  GENEROUS_LIMITS,
  randomIp,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { applications, auditEvents } from '../../db/schema.ts'

let server: TestServer
const REDIRECT = 'https://app.example.com/callback'

before(async (ctx) => {
  server = await startTestServer(ctx)
})

const setRegistration = async (t: TenantFixture, on: boolean) => {
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { dynamicClientRegistration: on },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.dynamicClientRegistration, on)
}

const discovery = async (slug: string) => {
  const res = await server.request('GET', `/oidc/${slug}/.well-known/openid-configuration`)
  assert.equal(res.status, 200)
  return res.body as Record<string, unknown>
}

const register = (slug: string, body: unknown, ip?: string) =>
  server.request('POST', `/oidc/${slug}/reg`, body, { ip })

const listApplications = async (t: TenantFixture) => {
  const res = await server.request('GET', `/v1/${t.slug}/applications`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(res.status, 200)
  return res.body.items as Record<string, unknown>[]
}

/** openid-client's own dynamic registration (RFC 7591) at the tenant's issuer. */
const registerWithClient = (slug: string, metadata: Partial<client.ClientMetadata>) =>
  client.dynamicClientRegistration(new URL(issuerOf(server, slug)), metadata, undefined, {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: serverFetch(server),
  })

test('registration is off by default: not in discovery, and the endpoint answers as at a path the provider does not serve', async () => {
  const t = await createTenant(server)
  const tenant = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(tenant.body.dynamicClientRegistration, false)
  assert.equal((await discovery(t.slug)).registration_endpoint, undefined)
  const rfc8414 = await server.request(
    'GET',
    `/.well-known/oauth-authorization-server/oidc/${t.slug}`,
  )
  assert.equal(rfc8414.body.registration_endpoint, undefined)
  const unknown = await server.request('POST', `/oidc/${t.slug}/no-such-endpoint`, {})
  await unchanged(server, t.tenantId, async () => {
    for (const path of ['/reg', '/reg/some-client']) {
      for (const method of ['POST', 'GET']) {
        const res = await server.request(
          method,
          `/oidc/${t.slug}${path}`,
          method === 'POST' ? { redirect_uris: [REDIRECT] } : undefined,
        )
        assert.equal(res.status, 404, `${method} ${path}`)
        assert.equal(res.body, unknown.body)
        assert.equal(res.headers.get('content-type'), unknown.headers.get('content-type'))
      }
    }
  })
  assert.equal(unknown.status, 404)
})

test('open: openid-client registers a web client, listed as dynamic and third-party, audited as a dynamic registration; its secret authenticates it', async () => {
  const t = await createTenant(server)
  await setRegistration(t, true)
  const doc = await discovery(t.slug)
  assert.equal(doc.registration_endpoint, `${issuerOf(server, t.slug)}/reg`)

  const config = await registerWithClient(t.slug, {
    client_name: 'Gadget Planner',
    redirect_uris: [REDIRECT],
    // Asked for, never granted: the rows keep only what an application has.
    first_party: true,
    allowed_scopes: ['admin'],
    logo_uri: 'https://app.example.com/logo.png',
  })
  const metadata = config.clientMetadata()
  assert.equal(metadata.client_name, 'Gadget Planner')
  assert.equal(metadata.token_endpoint_auth_method, 'client_secret_basic')
  assert.equal(typeof metadata.client_secret, 'string')
  assert.deepEqual(metadata.redirect_uris, [REDIRECT])
  assert.equal(metadata.first_party, undefined)
  assert.equal(metadata.logo_uri, undefined)
  // RFC 7592 is not offered.
  assert.equal(metadata.registration_access_token, undefined)

  const [listed] = await listApplications(t)
  assert.equal(listed.clientId, config.clientMetadata().client_id)
  assert.equal(listed.name, 'Gadget Planner')
  assert.equal(listed.type, 'web')
  assert.equal(listed.dynamic, true)
  assert.equal(listed.firstParty, false)
  assert.deepEqual(listed.allowedScopes, [])
  assert.deepEqual(listed.redirectUris, [REDIRECT])

  const [event] = await server.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'ApplicationCreated')))
  assert.equal(event.actorType, 'anonymous')
  assert.equal(event.actorId, null)
  assert.equal(event.ip, '127.0.0.1')
  assert.deepEqual(event.metadata, {
    applicationId: listed.id,
    clientId: listed.clientId,
    name: 'Gadget Planner',
    type: 'web',
    dynamic: true,
  })
  const [row] = await server.deps.db
    .select()
    .from(applications)
    .where(eq(applications.id, String(listed.id)))
  assert.ok(row.clientSecretEnc && !row.clientSecretEnc.includes(String(metadata.client_secret)))

  // The secret authenticates the client (RFC 7662: a confidential client may introspect).
  const introspected = await client.tokenIntrospection(config, 'no-such-token')
  assert.equal(introspected.active, false)

  // An admin cannot make it first-party: its users are always asked (CONTRACT §11, Consent).
  const patched = await server.request(
    'PATCH',
    `/v1/${t.slug}/applications/${listed.id}`,
    { firstParty: true },
    { token: t.admin.accessToken },
  )
  expectValidation(patched, 'body.firstParty')
  assert.equal((await listApplications(t))[0].firstParty, false)
  // An admin deletes it like any application; it is unknown from then on.
  const deleted = await server.request(
    'DELETE',
    `/v1/${t.slug}/applications/${listed.id}`,
    undefined,
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal(deleted.status, 200)
  await assert.rejects(client.tokenIntrospection(config, 'no-such-token'))
})

test('open: public spa and native clients (none, PKCE) and client_secret_post; each is the type its metadata asks', async () => {
  const t = await createTenant(server)
  await setRegistration(t, true)
  const spa = await register(t.slug, {
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
  })
  assert.equal(spa.status, 201, JSON.stringify(spa.body))
  assert.equal(spa.body.client_secret, undefined)
  assert.equal(spa.body.client_name, 'app.example.com')
  const native = await register(t.slug, {
    application_type: 'native',
    client_name: 'Pocket',
    redirect_uris: ['com.example.pocket:/callback', 'http://127.0.0.1/callback'],
  })
  assert.equal(native.status, 201, JSON.stringify(native.body))
  assert.equal(native.body.token_endpoint_auth_method, 'none')
  const post = await register(t.slug, {
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['authorization_code', 'refresh_token'],
  })
  assert.equal(post.status, 201, JSON.stringify(post.body))
  const types = Object.fromEntries((await listApplications(t)).map((a) => [a.clientId, a.type]))
  assert.deepEqual(types, {
    [spa.body.client_id]: 'spa',
    [native.body.client_id]: 'native',
    [post.body.client_id]: 'web',
  })
  // Its secret in the body authenticates it (oidc-provider takes either way of sending it).
  const introspect = (body: Record<string, string>) =>
    fetch(`${server.url}/oidc/${t.slug}/token/introspection`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    })
  const { client_id, client_secret } = post.body
  assert.equal((await introspect({ token: 'x', client_id, client_secret })).status, 200)
  const wrong = await introspect({ token: 'x', client_id, client_secret: `${client_secret}x` })
  assert.equal(wrong.status, 401)
})

test('open: metadata outside the rules is refused with RFC 7591 errors, nothing created', async () => {
  const t = await createTenant(server)
  await setRegistration(t, true)
  const cases: [Record<string, unknown>, string][] = [
    [{}, 'invalid_redirect_uri'],
    [{ redirect_uris: [] }, 'invalid_redirect_uri'],
    [{ redirect_uris: 'https://app.example.com/cb' }, 'invalid_redirect_uri'],
    [{ redirect_uris: [42] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['http://app.example.com/callback'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['https://user:pw@app.example.com/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['/callback'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri'],
    [{ redirect_uris: Array(21).fill(REDIRECT) }, 'invalid_redirect_uri'],
    [{ redirect_uris: [`https://app.example.com/${'a'.repeat(2000)}`] }, 'invalid_redirect_uri'],
    [
      { application_type: 'native', redirect_uris: ['https://localhost/cb'] },
      'invalid_redirect_uri',
    ],
    [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
    [
      { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'ünïcode "grant"'] },
      'invalid_client_metadata',
    ],
    [
      { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'implicit'] },
      'invalid_client_metadata',
    ],
    [{ redirect_uris: [REDIRECT], grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
    [
      {
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
      },
      'invalid_client_metadata',
    ],
    [{ redirect_uris: [REDIRECT], response_types: ['code id_token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], application_type: 'machine' }, 'invalid_client_metadata'],
    [
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
    ],
    [
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_jwt' },
      'invalid_client_metadata',
    ],
    [
      {
        application_type: 'native',
        redirect_uris: ['com.example.app:/cb'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      'invalid_client_metadata',
    ],
    [{ redirect_uris: [REDIRECT], client_name: '' }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
    [{ redirect_uris: [REDIRECT], client_name: 7 }, 'invalid_client_metadata'],
    [
      { redirect_uris: [REDIRECT], post_logout_redirect_uris: ['http://evil.example.com/'] },
      'invalid_client_metadata',
    ],
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const [body, error] of cases) {
      const res = await register(t.slug, body)
      assert.equal(res.status, 400, JSON.stringify(body))
      assert.equal(res.body.error, error, JSON.stringify(body))
      // RFC 6749 §5.2: the description's characters.
      assert.match(res.body.error_description, /^[\x20-\x21\x23-\x5B\x5D-\x7E]+$/)
      assert.equal(res.headers.get('cache-control'), 'no-store')
    }
    // Not a JSON object: oidc-provider's invalid_request.
    for (const raw of ['[]', '"x"', '{', '']) {
      const res = await server.request('POST', `/oidc/${t.slug}/reg`, undefined, {
        raw,
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(res.status, 400, raw)
      assert.equal(res.body.error, 'invalid_request', raw)
    }
    const form = await server.request('POST', `/oidc/${t.slug}/reg`, undefined, {
      raw: `redirect_uris=${REDIRECT}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    assert.equal(form.status, 400)
  })
  assert.deepEqual(await listApplications(t), [])
})

test('RATE_LIMIT_CLIENT_REGISTRATION: past the budget, 429 with Retry-After and nothing created; another IP keeps its own', async (ctx) => {
  const limited = await startTestServer(ctx, {
    limits: { ...GENEROUS_LIMITS, clientRegistration: { points: 2, seconds: 3600 } },
  })
  const t = await createTenant(limited)
  const patched = await limited.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { dynamicClientRegistration: true },
    { token: t.admin.accessToken },
  )
  assert.equal(patched.status, 200)
  const send = (body: unknown, ip: string) =>
    limited.request('POST', `/oidc/${t.slug}/reg`, body, { ip })
  // Fresh addresses: with Redis the buckets outlive the test run.
  const ip = randomIp()
  assert.equal((await send({ redirect_uris: [REDIRECT] }, ip)).status, 201)
  // A refused registration counts too: the budget is for attempts.
  assert.equal((await send({ redirect_uris: ['http://app.example.com/'] }, ip)).status, 400)
  const refused = await unchanged(limited, t.tenantId, () =>
    send({ redirect_uris: [REDIRECT] }, ip),
  )
  expectError(refused, 429, 'rate_limited')
  assert.ok(Number(refused.headers.get('retry-after')) > 0)
  assert.equal((await send({ redirect_uris: [REDIRECT] }, randomIp())).status, 201)
})

test('isolation: another tenant’s setting does not open this one, and a client registered there is unknown here', async () => {
  const open = await createTenant(server)
  const closed = await createTenant(server)
  await setRegistration(open, true)
  const there = await register(open.slug, { redirect_uris: [REDIRECT] })
  assert.equal(there.status, 201)
  assert.equal((await discovery(closed.slug)).registration_endpoint, undefined)
  await unchanged(server, [closed.tenantId], async () => {
    const res = await register(closed.slug, { redirect_uris: [REDIRECT] })
    assert.equal(res.status, 404)
  })
  assert.deepEqual(await listApplications(closed), [])
  // The client exists at its own issuer only.
  const here = await fetch(
    `${server.url}/oidc/${closed.slug}/auth?${new URLSearchParams({
      client_id: there.body.client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid',
    })}`,
    { redirect: 'manual' },
  )
  assert.equal(here.status, 400)
})

test('a provider already built follows the setting: turned off, registration closes at once; clients made stay', async () => {
  const t = await createTenant(server)
  await setRegistration(t, true)
  assert.equal((await register(t.slug, { redirect_uris: [REDIRECT] })).status, 201)
  await setRegistration(t, false)
  assert.equal((await discovery(t.slug)).registration_endpoint, undefined)
  await unchanged(server, t.tenantId, async () => {
    assert.equal((await register(t.slug, { redirect_uris: [REDIRECT] })).status, 404)
  })
  const [kept] = await listApplications(t)
  assert.equal(kept.dynamic, true)
  await setRegistration(t, true)
  assert.equal((await register(t.slug, { redirect_uris: [REDIRECT] })).status, 201)
})

test('two instances: a setting changed on one opens and closes registration on the other, whose provider is already built, within the 2 s tenant cache', {
  skip: process.env.DATABASE_URL ? false : 'needs DATABASE_URL: two instances share one PostgreSQL',
}, async (ctx) => {
  const second = await startSecondInstance(server)
  ctx.after(() => second.close())
  const t = await createTenant(server)
  const listed = async () => {
    const res = await second.request('GET', `/oidc/${t.slug}/.well-known/openid-configuration`)
    return res.body.registration_endpoint !== undefined
  }
  // The second instance builds its provider for the tenant while registration is closed.
  assert.equal(await listed(), false)
  const until = async (want: boolean) => {
    const deadline = Date.now() + 5000
    while ((await listed()) !== want) {
      assert.ok(Date.now() < deadline, `registration still ${want ? 'closed' : 'open'} after 5 s`)
      await new Promise((done) => setTimeout(done, 100))
    }
  }
  await setRegistration(t, true)
  await until(true)
  const made = await second.request('POST', `/oidc/${t.slug}/reg`, { redirect_uris: [REDIRECT] })
  assert.equal(made.status, 201)
  await setRegistration(t, false)
  await until(false)
  const refused = await second.request('POST', `/oidc/${t.slug}/reg`, { redirect_uris: [REDIRECT] })
  assert.equal(refused.status, 404)
})
