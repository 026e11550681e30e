// First-party tokens (CONTRACT §4, §11; issue 20): the service's own access tokens carry
// `aud` = `{PUBLIC_URL}/v1`, and the /v1 API and introspection accept exactly that. A token
// signed with the service's own key but with no `aud`, a client id or a resource identifier
// as `aud`, or a list that merely includes ours, is refused (401 token_invalid) and
// introspects as inactive, with HS256 and with a public-key JWT_ALG alike; so is a token
// the tenant's OpenID provider minted for one of its applications.
import assert from 'node:assert/strict'
import { createHmac, createPrivateKey, randomUUID } from 'node:crypto'
import { before, describe, test } from 'node:test'
import * as client from 'openid-client'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { createApiResource, createApplication, oidcClient } from '../../../test/fixtures/oidc.ts'
import { decodePart, forgeJws, privateKeyPem } from '../../../test/fixtures/signing-keys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  TEST_JWT_SECRET,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { keyId } from '../../lib/jwt.ts'

const AUDIENCE = 'http://auth.test/v1'

interface Setup {
  server: TestServer
  t: TenantFixture
  user: Awaited<ReturnType<typeof signup>>
  apiKey: string
  /** Signs `payload` with the server's own signing key and the header it uses. */
  sign: (payload: Record<string, unknown>) => string
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

async function setup(server: TestServer, sign: Setup['sign']): Promise<Setup> {
  const t = await createTenant(server)
  const user = await signup(server, t.slug)
  return { server, t, user, apiKey: await insertApiKey(server, t.tenantId), sign }
}

const setups: Record<'HS256' | 'ES256', Setup> = {} as never
before(async (ctx) => {
  const hs = await startTestServer(ctx)
  setups.HS256 = await setup(hs, (payload) => {
    const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: keyId(TEST_JWT_SECRET) })}.${b64(payload)}`
    const mac = createHmac('sha256', TEST_JWT_SECRET).update(input).digest('base64url')
    return `${input}.${mac}`
  })
  const pem = privateKeyPem('ES256')
  const es = await startTestServer(ctx, { jwtAlg: 'ES256', jwtPrivateKeys: [pem] })
  const key = createPrivateKey(pem)
  const esSetup = await setup(es, () => '')
  const header = decodePart(esSetup.user.accessToken, 0)
  esSetup.sign = (payload) => forgeJws(header, payload, { ec: key })
  setups.ES256 = esSetup
})

/** The claims of the setup user's live session, issued now by the service's clock. */
function claims(s: Setup, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = Math.floor(s.server.clock.now().getTime() / 1000)
  return {
    ...decodePart(s.user.accessToken, 1),
    iat,
    exp: iat + 900,
    jti: randomUUID(),
    ...overrides,
  }
}

const me = (s: Setup, token: string) =>
  s.server.request('GET', `/v1/${s.t.slug}/me`, undefined, { token })

async function introspection(s: Setup, token: string) {
  const res = await s.server.request(
    'POST',
    `/v1/${s.t.slug}/oauth/introspect`,
    { token },
    { token: s.apiKey },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}

for (const alg of ['HS256', 'ES256'] as const) {
  describe(`first-party audience (${alg})`, () => {
    test('a token from sign-in names {PUBLIC_URL}/v1 as its aud, and opens /v1', async () => {
      const s = setups[alg]
      assert.equal(decodePart(s.user.accessToken, 1).aud, AUDIENCE)
      assert.equal((await me(s, s.user.accessToken)).status, 200)
      assert.equal((await introspection(s, s.user.accessToken)).active, true)
    })

    test('a token forged with our key and our aud is accepted (the forger is sound)', async () => {
      const s = setups[alg]
      const token = s.sign(claims(s))
      assert.equal((await me(s, token)).status, 200)
      assert.equal((await introspection(s, token)).active, true)
    })

    const wrong: Array<[string, Record<string, unknown>]> = [
      ['no aud', { aud: undefined }],
      ['a client id as aud', { aud: 'a6ad5d1c-client-id-of-an-application' }],
      ['a resource identifier as aud', { aud: 'https://reports.example.com' }],
      ['another service’s /v1', { aud: 'http://other.test/v1' }],
      ['our aud among others', { aud: [AUDIENCE, 'a6ad5d1c-client-id'] }],
      ['our aud alone in a list', { aud: [AUDIENCE] }],
      ['an empty aud', { aud: '' }],
    ]
    for (const [name, overrides] of wrong) {
      test(`rule: a token signed with our key but ${name} never opens /v1 (401 token_invalid) and is inactive`, async () => {
        const s = setups[alg]
        const payload = claims(s, overrides)
        if (overrides.aud === undefined) delete payload.aud
        const token = s.sign(payload)
        expectError(await me(s, token), 401, 'token_invalid')
        assert.deepEqual(await introspection(s, token), { active: false })
      })
    }
  })
}

test('rule: tokens the tenant’s OpenID provider issued never open /v1 (401 token_invalid)', async () => {
  const s = setups.HS256
  const { server, t } = s
  const resource = await createApiResource(server, t.slug, t.admin.accessToken, {
    name: 'Reports',
    identifier: `https://reports.example.com/${t.slug}`,
    scopes: [{ name: 'reports:read' }],
  })
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Nightly job',
    type: 'machine',
    allowedScopes: ['reports:read'],
  })
  const config = await oidcClient(
    server,
    t.slug,
    made.application.clientId,
    made.clientSecret as string,
  )
  const jwt = (
    await client.clientCredentialsGrant(config, {
      scope: 'reports:read',
      resource: resource.identifier,
    })
  ).access_token
  assert.equal(decodePart(jwt, 1).aud, resource.identifier)
  const opaque = (await client.clientCredentialsGrant(config)).access_token
  for (const token of [jwt, opaque]) {
    expectError(await me(s, token), 401, 'token_invalid')
    assert.deepEqual(await introspection(s, token), { active: false })
  }
})
