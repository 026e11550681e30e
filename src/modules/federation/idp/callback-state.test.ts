// The callback's refusals (CONTRACT §7): the provider's `error` is 401 idp_error; an
// unknown, replayed, expired or other tenant's state is 400 invalid_state; a code the
// provider will not exchange is 401 idp_exchange_failed. None of them signs anyone in.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { tenantSnapshot } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import {
  callbackPath,
  connectedTenant,
  discoveryConfig,
  newAccount,
  roundTrip,
  startUrl,
  startWithProvider,
  stateRow,
} from '../../../../test/fixtures/oauth.ts'
import {
  GENEROUS_LIMITS,
  randomIp,
  startServer,
  type TestServer,
} from '../../../../test/helpers.ts'
import type { OidcProviderFixture } from '../../../../test/oidc-provider.ts'
import { and, eq } from '../../../db/orm.ts'
import { oauthStates } from '../../../db/schema.ts'
import { hashToken } from '../../../lib/crypto.ts'
import { STATE_TTL } from './service.ts'

let server: TestServer
let idp: OidcProviderFixture
before(async () => {
  ;({ server, idp } = await startWithProvider())
})
after(async () => {
  await server.close()
  await idp.close()
})

const callback = (slug: string, query: string) =>
  server.request('GET', `/v1/${slug}/oauth/idp/callback?${query}`)

describe('the provider refused', () => {
  test('error=access_denied from the real provider is 401 idp_error, and its state is spent', async () => {
    const t = await connectedTenant(server, idp)
    const before = await tenantSnapshot(server, t.tenantId)
    const url = new URL(
      (await server.request('GET', `/v1/${t.slug}/oauth/idp/start`)).body.authorizationUrl,
    )
    const back = await idp.authorize(url.href, newAccount(), 'access_denied')
    assert.equal(back.searchParams.get('error'), 'access_denied')
    const res = await server.request('GET', callbackPath(back))
    expectError(res, 401, 'idp_error')
    assert.equal(res.body.details.error, 'access_denied')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    const state = url.searchParams.get('state') as string
    assert.ok((await stateRow(server, t.tenantId, state)).usedAt)
  })

  test('an error with a code beside it is still refused', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const before = await tenantSnapshot(server, t.tenantId)
    const res = await server.request('GET', `${callbackPath(back)}&error=server_error`)
    expectError(res, 401, 'idp_error')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('state', () => {
  test('an unknown state is 400 invalid_state', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    back.searchParams.set('state', 'a'.repeat(43))
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a missing state is 400 invalid_state', async () => {
    const t = await connectedTenant(server, idp)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await callback(t.slug, 'code=abc'), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a state is single-use: the same callback replayed is 400 invalid_state', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const first = await server.request('GET', callbackPath(back))
    assert.equal(first.status, 200)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a state is single-use under a race: of two parallel callbacks one signs in', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const results = await Promise.all([
      server.request('GET', callbackPath(back)),
      server.request('GET', callbackPath(back)),
    ])
    assert.deepEqual(results.map((r) => r.status).sort(), [200, 400])
    const refused = results.find((r) => r.status === 400)
    assert.equal(refused?.body.details.reason, 'invalid_state')
    assert.equal((await tenantSnapshot(server, t.tenantId)).sessions.length, 2) // the admin's and one
  })

  test('a state expires after ten minutes', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    server.clock.advance(STATE_TTL + 1)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a state is still good just before ten minutes', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    server.clock.advance(STATE_TTL - 5)
    const res = await server.request('GET', callbackPath(back))
    assert.equal(res.status, 200, JSON.stringify(res.body))
  })

  test("a state minted for one tenant is refused on another tenant's callback", async () => {
    const a = await connectedTenant(server, idp)
    const b = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, a.slug, newAccount())
    const beforeA = await tenantSnapshot(server, a.tenantId)
    const beforeB = await tenantSnapshot(server, b.tenantId)
    const res = await server.request(
      'GET',
      callbackPath(back).replace(`/v1/${a.slug}/`, `/v1/${b.slug}/`),
    )
    expectError(res, 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, a.tenantId), beforeA)
    assert.deepEqual(await tenantSnapshot(server, b.tenantId), beforeB)
    // Not spent by the other tenant's attempt: it still belongs to its own tenant.
    const own = await server.request('GET', callbackPath(back))
    assert.equal(own.status, 200, JSON.stringify(own.body))
    assert.equal(own.body.user.tenantId, a.tenantId)
  })

  test('a missing code is 400 validation and leaves the state unspent', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const state = back.searchParams.get('state') as string
    expectError(await callback(t.slug, `state=${state}`), 400, 'validation')
    assert.equal((await stateRow(server, t.tenantId, state)).usedAt, null)
  })
})

describe('code exchange', () => {
  test('a code the provider does not know is 401 idp_exchange_failed, and the state is spent', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    back.searchParams.set('code', 'not-a-code-the-provider-issued')
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 401, 'idp_exchange_failed')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    const state = back.searchParams.get('state') as string
    assert.ok((await stateRow(server, t.tenantId, state)).usedAt)
  })

  test('PKCE: a code is redeemed only with the verifier of the state it was issued for', async () => {
    const t = await connectedTenant(server, idp)
    const first = await roundTrip(server, idp, t.slug, newAccount())
    const second = await roundTrip(server, idp, t.slug, newAccount())
    // First's code with second's (valid, unspent) state: the server sends second's verifier.
    first.searchParams.set('state', second.searchParams.get('state') as string)
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(first)), 401, 'idp_exchange_failed')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a wrong stored client secret fails the exchange with 401 idp_exchange_failed', async () => {
    const t = await connectedTenant(server, idp)
    await server.request(
      'PUT',
      `/v1/${t.slug}/oauth/idp/credentials`,
      { clientId: t.client.clientId, clientSecret: 'not-the-secret' },
      { token: t.admin.accessToken },
    )
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 401, 'idp_exchange_failed')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('an issuer named in the response that is not the provider (RFC 9207 mix-up) is refused', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    back.searchParams.set('iss', 'https://attacker.example')
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 401, 'idp_exchange_failed')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('the PKCE verifier at rest', () => {
  const aad = (tenantId: string) => `${tenantId}:oauth-state`
  const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

  async function setVerifier(tenantId: string, state: string, codeVerifier: string) {
    await server.deps.db
      .update(oauthStates)
      .set({ codeVerifier })
      .where(and(eq(oauthStates.tenantId, tenantId), eq(oauthStates.stateHash, hashToken(state))))
  }

  test('the verifier is stored sealed with the field key, bound to its tenant', async () => {
    const a = await connectedTenant(server, idp)
    const b = await connectedTenant(server, idp)
    const url = await startUrl(server, a.slug)
    const challenge = url.searchParams.get('code_challenge') as string
    const row = await stateRow(server, a.tenantId, url.searchParams.get('state') as string)
    assert.notEqual(s256(row.codeVerifier), challenge)
    assert.doesNotMatch(row.codeVerifier, /^[A-Za-z0-9_-]{43,128}$/)
    const verifier = server.deps.cipher.decrypt(row.codeVerifier, aad(a.tenantId))
    assert.equal(s256(verifier), challenge)
    assert.throws(() => server.deps.cipher.decrypt(row.codeVerifier, aad(b.tenantId)))
  })

  test("a sealed verifier moved into another tenant's state is 400 invalid_state", async () => {
    const a = await connectedTenant(server, idp)
    const b = await connectedTenant(server, idp)
    const backA = await roundTrip(server, idp, a.slug, newAccount())
    const backB = await roundTrip(server, idp, b.slug, newAccount())
    const stateA = backA.searchParams.get('state') as string
    const stateB = backB.searchParams.get('state') as string
    const sealedA = (await stateRow(server, a.tenantId, stateA)).codeVerifier
    await setVerifier(b.tenantId, stateB, sealedA)
    const before = await tenantSnapshot(server, b.tenantId)
    expectError(await server.request('GET', callbackPath(backB)), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, b.tenantId), before)
    assert.ok((await stateRow(server, b.tenantId, stateB)).usedAt)
  })

  test('a verifier stored in plaintext is not used: 400 invalid_state', async () => {
    const t = await connectedTenant(server, idp)
    const back = await roundTrip(server, idp, t.slug, newAccount())
    const state = back.searchParams.get('state') as string
    const sealed = (await stateRow(server, t.tenantId, state)).codeVerifier
    await setVerifier(t.tenantId, state, server.deps.cipher.decrypt(sealed, aad(t.tenantId)))
    const before = await tenantSnapshot(server, t.tenantId)
    expectError(await server.request('GET', callbackPath(back)), 400, 'invalid_state')
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('bad requests', () => {
  const cases: [string, string][] = [
    ['a repeated code', 'code=a&code=b&state=s'],
    ['an empty state', 'code=a&state='],
    ['an empty code', 'code=&state=s'],
    ['an empty error', 'error=&state=s'],
    ['an oversized code', `code=${'c'.repeat(2049)}&state=s`],
    ['an oversized state', `code=a&state=${'s'.repeat(513)}`],
    ['an oversized error_description', `error=x&error_description=${'d'.repeat(2049)}`],
  ]
  for (const [name, query] of cases) {
    test(`${name} is 400 validation`, async () => {
      const t = await connectedTenant(server, idp)
      const before = await tenantSnapshot(server, t.tenantId)
      expectError(await callback(t.slug, query), 400, 'validation')
      assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    })
  }

  test('an unknown tenant is 404 on start and callback', async () => {
    expectError(
      await server.request('GET', '/v1/no-such-tenant-x/oauth/idp/start'),
      404,
      'tenant_not_found',
    )
    expectError(await callback('no-such-tenant-x', 'code=a&state=b'), 404, 'tenant_not_found')
  })

  test('a tenant without credentials answers 400 idp_not_configured on start and callback', async () => {
    const t = await connectedTenant(server, idp)
    await server.request('DELETE', `/v1/${t.slug}/oauth/idp/credentials`, undefined, {
      token: t.admin.accessToken,
    })
    expectError(
      await server.request('GET', `/v1/${t.slug}/oauth/idp/start`),
      400,
      'idp_not_configured',
    )
    expectError(await callback(t.slug, 'code=a&state=b'), 400, 'idp_not_configured')
  })
})

test('without IDP_* configuration start and callback answer 400 idp_not_configured', async () => {
  const bare = await startServer()
  try {
    const { createTenant } = await import('../../../../test/helpers.ts')
    const t = await createTenant(bare)
    const put = await bare.request(
      'PUT',
      `/v1/${t.slug}/oauth/idp/credentials`,
      { clientId: 'id', clientSecret: 'secret' },
      { token: t.admin.accessToken },
    )
    assert.equal(put.status, 200)
    const start = await bare.request('GET', `/v1/${t.slug}/oauth/idp/start`)
    expectError(start, 400, 'idp_not_configured')
    const cb = await bare.request('GET', `/v1/${t.slug}/oauth/idp/callback?code=a&state=b`)
    expectError(cb, 400, 'idp_not_configured')
  } finally {
    await bare.close()
  }
})

test('the callback is rate limited per IP (429 with Retry-After)', async () => {
  const limited = await startServer({
    idp: discoveryConfig(idp.issuer),
    limits: { ...GENEROUS_LIMITS, tokenEndpoints: { points: 2, seconds: 60 } },
  })
  try {
    const t = await connectedTenant(limited, idp)
    const ip = randomIp()
    const send = () =>
      limited.request('GET', `/v1/${t.slug}/oauth/idp/callback?code=a&state=b`, undefined, { ip })
    expectError(await send(), 400, 'invalid_state')
    expectError(await send(), 400, 'invalid_state')
    const third = await send()
    expectError(third, 429, 'rate_limited')
    assert.ok(Number(third.headers.get('retry-after')) > 0)
    // Another client is not held.
    const other = await limited.request(
      'GET',
      `/v1/${t.slug}/oauth/idp/callback?code=a&state=b`,
      undefined,
      { ip: randomIp() },
    )
    expectError(other, 400, 'invalid_state')
  } finally {
    await limited.close()
  }
})
