// The ID token is checked (CONTRACT §7: signature, iss, aud, nonce, exp). The provider's
// real token response is rewritten on its way out, so every other step of the round trip
// (real code, real state, real PKCE) is genuine and only the claim under test is wrong.
import assert from 'node:assert/strict'
import { after, afterEach, before, test } from 'node:test'
import { tenantSnapshot } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import {
  connectedTenant,
  identitiesOf,
  newAccount,
  signIn,
  startWithProvider,
} from '../../../../test/fixtures/oauth.ts'
import type { TestServer } from '../../../../test/helpers.ts'
import type { OidcProviderFixture } from '../../../../test/oidc-provider.ts'

let server: TestServer
let idp: OidcProviderFixture
before(async () => {
  ;({ server, idp } = await startWithProvider())
})
afterEach(() => {
  idp.tamperIdToken = undefined
})
after(async () => {
  await server.close()
  await idp.close()
})

const now = () => Math.floor(Date.now() / 1000)

async function refused(tamper: () => void) {
  const t = await connectedTenant(server, idp)
  const before = await tenantSnapshot(server, t.tenantId)
  tamper()
  const res = await signIn(server, idp, t.slug, newAccount())
  expectError(res, 401, 'idp_exchange_failed')
  assert.equal(res.body.accessToken, undefined)
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
}

test('the harness: a token re-signed by the provider with its claims intact is accepted', async () => {
  const t = await connectedTenant(server, idp)
  idp.rewriteIdToken((claims) => claims)
  const res = await signIn(server, idp, t.slug, newAccount())
  assert.equal(res.status, 200, JSON.stringify(res.body))
})

test('an ID token from another issuer (wrong iss) is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => ({ ...c, iss: 'https://other-issuer.example' })))
})

test('an ID token for another client (wrong aud) is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => ({ ...c, aud: 'some-other-client' })))
})

test('an ID token with a wrong nonce is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => ({ ...c, nonce: 'not-the-nonce-we-sent' })))
})

test('an ID token without a nonce is refused', async () => {
  await refused(() =>
    idp.rewriteIdToken((c) => {
      const { nonce: _, ...rest } = c
      return rest
    }),
  )
})

test('an expired ID token (exp in the past) is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => ({ ...c, iat: now() - 7200, exp: now() - 3600 })))
})

test('an unsigned ID token (alg: none) is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => c, 'none'))
})

test('a well-formed ID token signed by another key is refused', async () => {
  await refused(() => idp.rewriteIdToken((c) => c, 'other-key'))
})

test("another key's token cannot take over an existing account by naming its subject", async () => {
  const t = await connectedTenant(server, idp)
  const victim = newAccount()
  const first = await signIn(server, idp, t.slug, victim)
  assert.equal(first.status, 200)
  const before = await tenantSnapshot(server, t.tenantId)
  // The attacker signs in as themselves; the token is swapped for one naming the victim.
  idp.rewriteIdToken((c) => ({ ...c, sub: victim.sub, email: victim.email }), 'other-key')
  const res = await signIn(server, idp, t.slug, newAccount())
  expectError(res, 401, 'idp_exchange_failed')
  assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  assert.equal((await identitiesOf(server, t.tenantId)).length, 1)
})
