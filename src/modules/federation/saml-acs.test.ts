// The SAML service-provider routes through HTTP (CONTRACT §12, SP side and "SAML is strict"):
// the metadata, the start (an AuthnRequest bound to the browser by a cookie) and the ACS,
// with responses signed here by keys of the test's own. Every refusal is an error page
// (4xx), a UserLoginFailed row with metadata.reason, and nothing else changed.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { inflateRawSync } from 'node:zlib'
import { auditMark, auditSince, tenantSnapshot, userByEmail } from '../../../test/db.ts'
import {
  assertionXml,
  b64,
  idpKey,
  newId,
  type ResponseFields,
  responseXml,
  sign,
} from '../../../test/fixtures/saml-responses.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { SAML_COOKIE } from './saml-binding.ts'

const key = idpKey('ACS test IdP')
const other = idpKey('Another IdP')
const IDP_ENTITY = 'https://idp.corp.example/saml'
const IDP_SSO = 'https://idp.corp.example/sso'

interface Setup {
  server: TestServer
  t: TenantFixture
  id: string
  domain: string
  entityId: string
  acsUrl: string
  path: string
}

async function setup(server: TestServer, options: { jit?: boolean } = {}): Promise<Setup> {
  const t = await createTenant(server)
  const domain = `corp-${t.slug}.example`
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/sso-connections`,
    {
      name: 'Corp SAML',
      type: 'saml',
      domains: [domain],
      jitProvisioning: options.jit ?? true,
      saml: { idpEntityId: IDP_ENTITY, idpSsoUrl: IDP_SSO, idpCertificates: [key.certificate] },
    },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const id = res.body.connection.id as string
  const publicUrl = server.deps.config.publicUrl
  return {
    server,
    t,
    id,
    domain,
    entityId: `${publicUrl}/v1/${t.slug}/sso/${id}`,
    acsUrl: `${publicUrl}/v1/${t.slug}/sso/${id}/saml/acs`,
    path: `/v1/${t.slug}/sso/${id}`,
  }
}

/** GET …/saml/start: the IdP URL, the AuthnRequest's ID and the cookie that binds it. */
async function start(s: Setup) {
  const res = await fetch(`${s.server.url}${s.path}/saml/start`, { redirect: 'manual' })
  assert.equal(res.status, 303)
  const location = new URL(res.headers.get('location') ?? '')
  const request = inflateRawSync(
    Buffer.from(location.searchParams.get('SAMLRequest') ?? '', 'base64'),
  ).toString()
  const requestId = /ID="([^"]+)"/.exec(request)?.[1] ?? ''
  // Over http `ta_saml` at the ACS; over https `__Host-ta_saml_{slug}_{id}` at `/` (§16).
  const setCookie =
    res.headers
      .getSetCookie()
      .find((c) => c.startsWith(`${SAML_COOKIE}=`) || c.startsWith(`__Host-${SAML_COOKIE}_`)) ?? ''
  return { location, request, requestId, setCookie, cookie: setCookie.split(';')[0] }
}

function fields(
  s: Setup,
  requestId: string | null,
  over: Partial<ResponseFields> = {},
): ResponseFields {
  const now = s.server.clock.now()
  const minutes = (n: number) => new Date(now.getTime() + n * 60_000)
  return {
    responseId: newId(),
    assertionId: newId(),
    issuer: IDP_ENTITY,
    destination: s.acsUrl,
    inResponseTo: requestId,
    scdInResponseTo: requestId,
    recipient: s.acsUrl,
    audience: s.entityId,
    issueInstant: now,
    notBefore: minutes(-1),
    notOnOrAfter: minutes(5),
    scdNotOnOrAfter: minutes(5),
    nameId: `ada@${s.domain}`,
    nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    attributes: {},
    status: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    ...over,
  }
}

const signed = (f: ResponseFields, by = key) =>
  responseXml(f, sign(assertionXml(f), f.assertionId, by))

async function post(s: Setup, form: Record<string, string>, cookie?: string) {
  const res = await fetch(`${s.server.url}${s.path}/saml/acs`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(form).toString(),
  })
  return { status: res.status, location: res.headers.get('location'), text: await res.text(), res }
}

/** Posts `xml`; asserts the error page, the one UserLoginFailed row and nothing else changed. */
async function refused(
  s: Setup,
  xml: string | undefined,
  cookie: string | undefined,
  reason: string,
  status = 403,
) {
  const mark = await auditMark(s.server, s.t.tenantId)
  const before = await tenantSnapshot(s.server, s.t.tenantId, { audit: false })
  const got = await post(s, xml === undefined ? {} : { SAMLResponse: b64(xml) }, cookie)
  assert.equal(got.status, status, got.text.slice(0, 500))
  assert.match(got.res.headers.get('content-type') ?? '', /text\/html/)
  assert.match(got.text, /Single sign-on did not work/)
  assert.match(got.text, new RegExp(`Error code: ${reason}`))
  assert.deepEqual(await tenantSnapshot(s.server, s.t.tenantId, { audit: false }), before)
  const events = await auditSince(s.server, s.t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [
      e.action,
      (e.metadata as Record<string, unknown>).reason,
      (e.metadata as Record<string, unknown>).connectionId,
    ]),
    [['UserLoginFailed', reason, s.id]],
  )
}

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

describe('SAML SP metadata', () => {
  test('answers our entityID and HTTP-POST ACS as XML, to anyone', async () => {
    const s = await setup(server)
    const res = await fetch(`${server.url}/v1/${s.t.slug}/sso-connections/${s.id}/saml/metadata`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^application\/samlmetadata\+xml/)
    const xml = await res.text()
    assert.match(xml, new RegExp(`entityID="${s.entityId}"`))
    assert.match(
      xml,
      new RegExp(`Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${s.acsUrl}"`),
    )
  })

  test('an unknown connection, an OIDC one or another tenant’s: 404', async () => {
    const s = await setup(server)
    const elsewhere = await setup(server)
    const oidc = await server.request(
      'POST',
      `/v1/${s.t.slug}/sso-connections`,
      {
        name: 'O',
        type: 'oidc',
        domains: [`o-${s.domain}`],
        oidc: { issuer: 'https://oidc.corp.example', clientId: 'c', clientSecret: 's' },
      },
      { token: s.t.admin.accessToken },
    )
    for (const id of [
      '00000000-0000-4000-8000-000000000000',
      'nope',
      oidc.body.connection?.id,
      elsewhere.id,
    ]) {
      const res = await server.request('GET', `/v1/${s.t.slug}/sso-connections/${id}/saml/metadata`)
      assert.equal(res.status, 404, String(id))
      assert.equal(res.body.code, 'NOT_FOUND')
    }
  })
})

describe('SAML sign-in start', () => {
  test('redirects to the IdP with an unsigned AuthnRequest bound to the browser', async () => {
    const s = await setup(server)
    const got = await start(s)
    assert.equal(got.location.origin + got.location.pathname, IDP_SSO)
    assert.match(got.request, new RegExp(`AssertionConsumerServiceURL="${s.acsUrl}"`))
    assert.match(got.requestId, /^_[0-9a-f]{40}$/)
    // Plain http here: Lax (a browser refuses SameSite=None without Secure).
    assert.match(got.setCookie, new RegExp(`Path=${s.path}/saml/acs;`))
    assert.match(got.setCookie, /HttpOnly; SameSite=Lax; Max-Age=600$/)
  })

  test('over https the binding cookie is SameSite=None; Secure (the ACS is a cross-site POST)', async (t) => {
    const secure = await startTestServer(t, { publicUrl: 'https://auth.example.test' })
    const s = await setup(secure)
    const got = await start(s)
    assert.match(got.setCookie, /HttpOnly; SameSite=None; Secure; Max-Age=600$/)
    // CONTRACT §16: a __Host- cookie (Path=/, no Domain) named for the tenant and connection.
    assert.ok(got.setCookie.startsWith(`__Host-${SAML_COOKIE}_${s.t.slug}_${s.id}=`), got.setCookie)
    assert.match(got.setCookie, /; Path=\/;/)
  })
})

describe('SAML ACS', () => {
  test('a signed response to this browser’s request signs the person in, once', async () => {
    const s = await setup(server)
    const { requestId, cookie } = await start(s)
    const mark = await auditMark(server, s.t.tenantId)
    const xml = signed(fields(s, requestId))
    const got = await post(s, { SAMLResponse: b64(xml) }, cookie)
    assert.equal(got.status, 303, got.text.slice(0, 500))
    assert.equal(got.location, `/t/${s.t.slug}/account`)
    const user = await userByEmail(server, s.t.tenantId, `ada@${s.domain}`)
    assert.ok(user)
    assert.equal(user.emailVerified, true)
    const events = await auditSince(server, s.t.tenantId, mark)
    const login = events.find((e) => e.action === 'UserLogin')
    assert.deepEqual(
      {
        method: (login?.metadata as Record<string, unknown> | undefined)?.method,
        connectionId: (login?.metadata as Record<string, unknown> | undefined)?.connectionId,
      },
      { method: 'sso', connectionId: s.id },
    )
    assert.ok(events.some((e) => e.action === 'SsoIdentityLinked'))
    // The same response again, with the cookie as it was before it was spent (a copy):
    // the assertion ID was accepted once.
    await refused(s, xml, cookie, 'saml_replayed')
  })

  const cases: [string, (s: Setup, requestId: string) => string, string][] = [
    ['signed by another key', (s, r) => signed(fields(s, r), other), 'saml_signature_invalid'],
    [
      'unsigned',
      (s, r) => {
        const f = fields(s, r)
        return responseXml(f, assertionXml(f))
      },
      'saml_unsigned',
    ],
    [
      'wrapped (a forged assertion beside the signed one)',
      (s, r) => {
        const f = fields(s, r)
        const evil = assertionXml(fields(s, r, { assertionId: newId(), nameId: `eve@${s.domain}` }))
        return responseXml(f, evil + sign(assertionXml(f), f.assertionId, key))
      },
      'saml_wrapped',
    ],
    [
      'for another audience',
      (s, r) => signed(fields(s, r, { audience: `${s.entityId}x` })),
      'saml_audience',
    ],
    [
      'for another recipient',
      (s, r) => signed(fields(s, r, { recipient: `${s.acsUrl}x` })),
      'saml_recipient',
    ],
    [
      'expired',
      (s, r) =>
        signed(
          fields(s, r, { notOnOrAfter: new Date(s.server.clock.now().getTime() - 4 * 60_000) }),
        ),
      'saml_expired',
    ],
  ]
  for (const [name, make, reason] of cases) {
    test(`a response ${name} is refused (${reason})`, async () => {
      const s = await setup(server)
      const { requestId, cookie } = await start(s)
      await refused(s, make(s, requestId), cookie, reason)
    })
  }

  test('a response to a request this browser did not make is refused (no cookie, another browser’s)', async () => {
    const s = await setup(server)
    const mine = await start(s)
    const theirs = await start(s)
    await refused(s, signed(fields(s, mine.requestId)), undefined, 'saml_request_unknown')
    await refused(s, signed(fields(s, mine.requestId)), theirs.cookie, 'saml_request_unknown')
  })

  test('an IdP-initiated response (no InResponseTo) is refused', async () => {
    const s = await setup(server)
    const { cookie } = await start(s)
    await refused(s, signed(fields(s, null)), cookie, 'saml_unsolicited')
  })

  test('a request is answered once: the cookie the ACS answers no longer lists it', async () => {
    const s = await setup(server)
    const { requestId, cookie } = await start(s)
    const first = await post(s, { SAMLResponse: b64(signed(fields(s, requestId), other)) }, cookie)
    assert.equal(first.status, 403)
    const spent =
      first.res.headers.getSetCookie().find((c) => c.startsWith(`${SAML_COOKIE}=`)) ?? ''
    assert.match(spent, /Max-Age=0/)
    await refused(s, signed(fields(s, requestId)), spent.split(';')[0], 'saml_request_unknown')
  })

  test('a request outstanding for more than ten minutes is refused', async () => {
    const s = await setup(server)
    const { requestId, cookie } = await start(s)
    server.clock.advance(10 * 60 + 1)
    await refused(s, signed(fields(s, requestId)), cookie, 'saml_request_unknown')
  })

  test('no SAMLResponse: 400', async () => {
    const s = await setup(server)
    const { cookie } = await start(s)
    await refused(s, undefined, cookie, 'saml_malformed', 400)
  })

  test('a disabled connection signs nobody in', async () => {
    const s = await setup(server)
    const { requestId, cookie } = await start(s)
    const patched = await server.request(
      'PATCH',
      `/v1/${s.t.slug}/sso-connections/${s.id}`,
      { enabled: false },
      { token: s.t.admin.accessToken },
    )
    assert.equal(patched.status, 200)
    await refused(s, signed(fields(s, requestId)), cookie, 'connection_disabled')
  })

  test('an email outside the connection’s domains: 403 sso_user_not_provisioned', async () => {
    const s = await setup(server)
    const { requestId, cookie } = await start(s)
    const xml = signed(fields(s, requestId, { nameId: 'ada@elsewhere.example' }))
    const mark = await auditMark(server, s.t.tenantId)
    const got = await post(s, { SAMLResponse: b64(xml) }, cookie)
    assert.equal(got.status, 403)
    assert.match(got.text, /Error code: sso_user_not_provisioned/)
    assert.equal(await userByEmail(server, s.t.tenantId, 'ada@elsewhere.example'), undefined)
    const events = await auditSince(server, s.t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, (e.metadata as Record<string, unknown>).reason]),
      [['UserLoginFailed', 'sso_user_not_provisioned']],
    )
  })
})

describe('SAML and the tenant’s mfaPolicy', () => {
  test('with mfaPolicy Required, only a multi-factor AuthnContext signs in', async () => {
    const s = await setup(server)
    const patched = await server.request(
      'PATCH',
      `/v1/${s.t.slug}/tenant`,
      { mfaPolicy: 'Required' },
      { token: s.t.admin.accessToken },
    )
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    const one = await start(s)
    const password = await post(
      s,
      { SAMLResponse: b64(signed(fields(s, one.requestId))) },
      one.cookie,
    )
    assert.equal(password.status, 401, password.text.slice(0, 300))
    assert.match(password.text, /Error code: mfa_required/)
    const two = await start(s)
    const mfa = fields(s, two.requestId, { authnContext: 'https://refeds.org/profile/mfa' })
    const got = await post(s, { SAMLResponse: b64(signed(mfa)) }, two.cookie)
    assert.equal(got.status, 303, got.text.slice(0, 300))
    assert.equal(got.location, `/t/${s.t.slug}/account`)
  })
})

describe('SAML role mapping (CONTRACT §17)', () => {
  test("the assertion's multi-valued attribute maps to roles at each sign-in; direct roles stay", async () => {
    const s = await setup(server)
    const token = s.t.admin.accessToken
    const call = (method: string, path: string, body?: unknown) =>
      server.request(method, `/v1/${s.t.slug}/${path}`, body, { token })
    for (const name of ['Engineers', 'Finance', 'Hooks']) {
      assert.equal((await call('POST', 'roles', { name, permissions: ['audit:read'] })).status, 200)
    }
    const patched = await call('PATCH', `sso-connections/${s.id}`, {
      roleMapping: [
        { claim: 'memberOf', value: 'cn=eng', roles: ['Engineers'] },
        { claim: 'memberOf', value: 'cn=fin', roles: ['Finance'] },
      ],
    })
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    const signIn = async (memberOf: string[]) => {
      const { requestId, cookie } = await start(s)
      const xml = signed(fields(s, requestId, { attributes: { memberOf } }))
      const got = await post(s, { SAMLResponse: b64(xml) }, cookie)
      assert.equal(got.status, 303, got.text.slice(0, 500))
      const user = await userByEmail(server, s.t.tenantId, `ada@${s.domain}`)
      assert.ok(user)
      const users = await call('GET', 'users?limit=200')
      return {
        id: user.id,
        roles: users.body.items.find((u: { id: string }) => u.id === user.id).roles as string[],
      }
    }
    const first = await signIn(['cn=eng', 'cn=other'])
    assert.deepEqual(first.roles, ['Engineers'])
    assert.equal((await call('PUT', `users/${first.id}/roles`, { roles: ['Hooks'] })).status, 200)
    const mark = await auditMark(server, s.t.tenantId)
    assert.deepEqual((await signIn(['cn=fin'])).roles, ['Finance', 'Hooks'])
    const changed = (await auditSince(server, s.t.tenantId, mark)).filter(
      (e) => e.action === 'UserRolesChanged',
    )
    assert.deepEqual(
      changed.map((e) => e.metadata),
      [{ added: ['Finance'], removed: ['Engineers'], via: 'sso' }],
    )
  })
})
