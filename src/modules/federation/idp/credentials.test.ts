// PUT and DELETE oauth/idp/credentials (SPEC, Identity-provider OAuth; CONTRACT §4, §7):
// an Admin's user token only, the secret sealed under the versioned field keys and never
// shown, idpOauthEnabled following, IdpOauthLinked and IdpOauthUnlinked audited.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { expectError } from '../../../../test/envelope.ts'
import { insertApiKey } from '../../../../test/fixtures/apikeys.ts'
import {
  newAccount,
  signIn,
  startWithProvider,
  tenantRow,
} from '../../../../test/fixtures/oauth.ts'
import {
  createTenant,
  signup,
  startSecondInstance,
  type TenantFixture,
  type TestServer,
} from '../../../../test/helpers.ts'
import type { OidcProviderFixture } from '../../../../test/oidc-provider.ts'
import { and, eq } from '../../../db/orm.ts'
import { auditEvents } from '../../../db/schema.ts'
import { FieldCipher } from '../../../lib/crypto.ts'

let server: TestServer
let idp: OidcProviderFixture
before(async () => {
  ;({ server, idp } = await startWithProvider())
})
after(async () => {
  await server.close()
  await idp.close()
})

const path = (slug: string) => `/v1/${slug}/oauth/idp/credentials`
const SECRET = 'a-client-secret-nobody-may-read-back'

async function put(t: TenantFixture, body: unknown, token = t.admin.accessToken) {
  return server.request('PUT', path(t.slug), body, { token })
}

async function idpAudit(tenantId: string) {
  const rows = await server.deps.db
    .select()
    .from(auditEvents)
    .where(eq(auditEvents.tenantId, tenantId))
  return rows.filter((r) => r.action === 'IdpOauthLinked' || r.action === 'IdpOauthUnlinked')
}

/** The tenant's credential columns and its idp audit events: what a refusal must not change. */
async function credentialState(tenantId: string) {
  const row = await tenantRow(server, tenantId)
  return {
    clientId: row.idpClientId,
    secret: row.idpClientSecretEnc,
    enabled: row.idpOauthEnabled,
    events: (await idpAudit(tenantId)).length,
  }
}

describe('PUT credentials', () => {
  test('stores the client id and the secret sealed under the current field key, and enables the flow', async () => {
    const t = await createTenant(server)
    const res = await put(t, { clientId: 'client-one', clientSecret: SECRET })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })

    const row = await tenantRow(server, t.tenantId)
    assert.equal(row.idpClientId, 'client-one')
    assert.equal(row.idpOauthEnabled, true)
    const sealed = row.idpClientSecretEnc as string
    assert.ok(!sealed.includes(SECRET))
    assert.ok(!sealed.includes(Buffer.from(SECRET).toString('base64url')))
    assert.ok(sealed.startsWith('v1:'))
    assert.equal(server.deps.cipher.decrypt(sealed, `${t.tenantId}:idp`), SECRET)
    // Bound to its tenant: the ciphertext copied to another tenant's row does not open.
    const other = await createTenant(server)
    assert.throws(() => server.deps.cipher.decrypt(sealed, `${other.tenantId}:idp`))
  })

  test('only hasIdpClientSecret is ever shown: the tenant record and the audit log never carry the secret', async () => {
    const t = await createTenant(server)
    await put(t, { clientId: 'client-shown', clientSecret: SECRET })
    const record = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(record.status, 200)
    assert.equal(record.body.idpClientId, 'client-shown')
    assert.equal(record.body.hasIdpClientSecret, true)
    assert.equal(record.body.idpOauthEnabled, true)
    assert.ok(!JSON.stringify(record.body).includes(SECRET))
    const events = await idpAudit(t.tenantId)
    assert.equal(events.length, 1)
    assert.equal(events[0].action, 'IdpOauthLinked')
    assert.equal(events[0].actorType, 'user')
    assert.equal(events[0].metadata.clientId, 'client-shown')
    assert.ok(!JSON.stringify(events).includes(SECRET))
  })

  test('a second PUT replaces the credentials', async () => {
    const t = await createTenant(server)
    await put(t, { clientId: 'first', clientSecret: 'first-secret' })
    await put(t, { clientId: 'second', clientSecret: 'second-secret' })
    const row = await tenantRow(server, t.tenantId)
    assert.equal(row.idpClientId, 'second')
    assert.equal(
      server.deps.cipher.decrypt(row.idpClientSecretEnc as string, `${t.tenantId}:idp`),
      'second-secret',
    )
    assert.equal((await idpAudit(t.tenantId)).length, 2)
  })

  test('stored credentials are the ones the sign-in uses', async () => {
    const t = await createTenant(server)
    const client = await idp.addClient(`http://auth.test/v1/${t.slug}/oauth/idp/callback`)
    await put(t, client)
    const res = await signIn(server, idp, t.slug, newAccount())
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  test('key rotation: a secret sealed under an older key still works, and a new PUT seals under the new key', async () => {
    const t = await createTenant(server)
    const client = await idp.addClient(`http://auth.test/v1/${t.slug}/oauth/idp/callback`)
    await put(t, client)
    const keys = [{ version: 'v2', key: Buffer.alloc(32, 9) }, ...server.deps.config.encryptionKeys]
    const rotated = await startSecondInstance(server, { encryptionKeys: keys })
    try {
      const start = await rotated.request('GET', `/v1/${t.slug}/oauth/idp/start`)
      assert.equal(start.status, 200, JSON.stringify(start.body))
      const back = await idp.authorize(start.body.authorizationUrl, newAccount())
      const res = await rotated.request('GET', back.pathname + back.search)
      assert.equal(res.status, 200, JSON.stringify(res.body))

      await rotated.request('PUT', path(t.slug), client, { token: t.admin.accessToken })
      const sealed = (await tenantRow(server, t.tenantId)).idpClientSecretEnc as string
      assert.ok(sealed.startsWith('v2:'))
      assert.equal(new FieldCipher(keys).decrypt(sealed, `${t.tenantId}:idp`), client.clientSecret)
    } finally {
      await rotated.close()
    }
  })
})

describe('DELETE credentials', () => {
  test('removes both values, disables the flow and records IdpOauthUnlinked', async () => {
    const t = await createTenant(server)
    await put(t, { clientId: 'gone-soon', clientSecret: SECRET })
    const res = await server.request('DELETE', path(t.slug), undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    const row = await tenantRow(server, t.tenantId)
    assert.equal(row.idpClientId, null)
    assert.equal(row.idpClientSecretEnc, null)
    assert.equal(row.idpOauthEnabled, false)
    const events = await idpAudit(t.tenantId)
    assert.deepEqual(events.map((e) => e.action).sort(), ['IdpOauthLinked', 'IdpOauthUnlinked'])
    const record = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(record.body.hasIdpClientSecret, false)
    assert.equal(record.body.idpOauthEnabled, false)
    const start = await server.request('GET', `/v1/${t.slug}/oauth/idp/start`)
    expectError(start, 400, 'idp_not_configured')
  })

  test('removing credentials that were never stored answers ok and records nothing', async () => {
    const t = await createTenant(server)
    const res = await server.request('DELETE', path(t.slug), undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(res.status, 200)
    assert.equal((await idpAudit(t.tenantId)).length, 0)
  })

  test('after DELETE a sign-in already under way cannot finish', async () => {
    const t = await createTenant(server)
    const client = await idp.addClient(`http://auth.test/v1/${t.slug}/oauth/idp/callback`)
    await put(t, client)
    const start = await server.request('GET', `/v1/${t.slug}/oauth/idp/start`)
    const back = await idp.authorize(start.body.authorizationUrl, newAccount())
    await server.request('DELETE', path(t.slug), undefined, { token: t.admin.accessToken })
    const res = await server.request('GET', back.pathname + back.search)
    expectError(res, 400, 'idp_not_configured')
  })
})

describe('who may change credentials', () => {
  for (const method of ['PUT', 'DELETE'] as const) {
    const body = method === 'PUT' ? { clientId: 'intruder', clientSecret: 'intruder' } : undefined

    test(`${method}: an API key is refused with 403 api_key_not_allowed`, async () => {
      const t = await createTenant(server)
      await put(t, { clientId: 'kept', clientSecret: SECRET })
      const key = await insertApiKey(server, t.tenantId)
      const before = await credentialState(t.tenantId)
      const res = await server.request(method, path(t.slug), body, { token: key })
      expectError(res, 403, 'api_key_not_allowed')
      assert.deepEqual(await credentialState(t.tenantId), before)
    })

    test(`${method}: a Member is refused with 403 admin_required`, async () => {
      const t = await createTenant(server)
      await put(t, { clientId: 'kept', clientSecret: SECRET })
      const member = await signup(server, t.slug)
      const before = await credentialState(t.tenantId)
      const res = await server.request(method, path(t.slug), body, { token: member.accessToken })
      expectError(res, 403, 'admin_required')
      assert.deepEqual(await credentialState(t.tenantId), before)
    })

    test(`${method}: no token is 401`, async () => {
      const t = await createTenant(server)
      await put(t, { clientId: 'kept', clientSecret: SECRET })
      const before = await credentialState(t.tenantId)
      const res = await server.request(method, path(t.slug), body)
      expectError(res, 401, 'token_missing')
      assert.deepEqual(await credentialState(t.tenantId), before)
    })

    test(`${method}: another tenant's admin token is refused on this tenant`, async () => {
      const t = await createTenant(server)
      const other = await createTenant(server)
      await put(t, { clientId: 'kept', clientSecret: SECRET })
      const before = await credentialState(t.tenantId)
      const res = await server.request(method, path(t.slug), body, {
        token: other.admin.accessToken,
      })
      expectError(res, 401, 'token_invalid')
      assert.deepEqual(await credentialState(t.tenantId), before)
    })

    test(`${method}: an unknown tenant is 404`, async () => {
      const t = await createTenant(server)
      const res = await server.request(method, path('no-such-tenant-here'), body, {
        token: t.admin.accessToken,
      })
      expectError(res, 404, 'tenant_not_found')
    })
  }
})

describe('PUT credentials: bad input changes nothing', () => {
  const cases: [string, unknown][] = [
    ['missing clientId', { clientSecret: SECRET }],
    ['missing clientSecret', { clientId: 'x' }],
    ['empty clientId', { clientId: '', clientSecret: SECRET }],
    ['empty clientSecret', { clientId: 'x', clientSecret: '' }],
    ['clientId over 512 characters', { clientId: 'c'.repeat(513), clientSecret: SECRET }],
    ['clientSecret over 512 characters', { clientId: 'x', clientSecret: 's'.repeat(513) }],
    ['a number as clientId', { clientId: 12345, clientSecret: SECRET }],
    ['an array as clientSecret', { clientId: 'x', clientSecret: [SECRET] }],
    ['null as clientSecret', { clientId: 'x', clientSecret: null }],
    ['an array body', [{ clientId: 'x', clientSecret: SECRET }]],
    ['an empty object', {}],
  ]
  for (const [name, body] of cases) {
    test(`${name} is 400 validation`, async () => {
      const t = await createTenant(server)
      await put(t, { clientId: 'kept', clientSecret: SECRET })
      const before = await credentialState(t.tenantId)
      const res = await put(t, body)
      expectError(res, 400, 'validation')
      assert.deepEqual(await credentialState(t.tenantId), before)
    })
  }

  test('exactly 512 characters each is accepted', async () => {
    const t = await createTenant(server)
    const res = await put(t, { clientId: 'c'.repeat(512), clientSecret: 's'.repeat(512) })
    assert.equal(res.status, 200)
    assert.equal((await tenantRow(server, t.tenantId)).idpClientId, 'c'.repeat(512))
  })

  test('unknown properties are ignored, never applied', async () => {
    const t = await createTenant(server)
    const res = await put(t, {
      clientId: 'x',
      clientSecret: SECRET,
      idpOauthEnabled: false,
      tenantId: '00000000-0000-0000-0000-000000000000',
    })
    assert.equal(res.status, 200)
    const row = await tenantRow(server, t.tenantId)
    assert.equal(row.idpOauthEnabled, true)
    assert.equal(row.idpClientId, 'x')
  })

  test('malformed JSON is 400 malformed_json', async () => {
    const t = await createTenant(server)
    await put(t, { clientId: 'kept', clientSecret: SECRET })
    const before = await credentialState(t.tenantId)
    const res = await server.request('PUT', path(t.slug), undefined, {
      token: t.admin.accessToken,
      raw: '{"clientId": "x", "clientSecret": ',
    })
    expectError(res, 400, 'malformed_json')
    assert.deepEqual(await credentialState(t.tenantId), before)
  })

  test('a non-JSON content type is 400', async () => {
    const t = await createTenant(server)
    await put(t, { clientId: 'kept', clientSecret: SECRET })
    const before = await credentialState(t.tenantId)
    const res = await server.request('PUT', path(t.slug), undefined, {
      token: t.admin.accessToken,
      raw: 'clientId=x&clientSecret=y',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    expectError(res, 400, 'unsupported_media_type')
    assert.deepEqual(await credentialState(t.tenantId), before)
  })
})

test('a tenant cannot read or use another tenant’s credentials', async () => {
  const a = await createTenant(server)
  const b = await createTenant(server)
  await put(a, { clientId: 'client-of-a', clientSecret: SECRET })
  const start = await server.request('GET', `/v1/${b.slug}/oauth/idp/start`)
  expectError(start, 400, 'idp_not_configured')
  const rows = await server.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, b.tenantId), eq(auditEvents.action, 'IdpOauthLinked')))
  assert.equal(rows.length, 0)
})
