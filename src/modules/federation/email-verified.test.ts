// An IdP's `email_verified` (issue 36 P4): only a JSON true, or the string "true" some
// providers send, counts as verified. The string "false" (and "False", 0) is an unverified
// address, which proves nothing: an OIDC SSO sign-in with it has no address and provisions
// no one, as with a JSON false. A provider that sends no claim at all (Entra ID) stays
// trusted for its connection's domains (CONTRACT §12).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { auditRows, userByEmail } from '../../../test/db.ts'
import { connectOidcIdp } from '../../../test/fixtures/sso-oidc.ts'
import {
  createTenant,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import {
  type IdpAccount,
  type OidcProviderFixture,
  startOidcProvider,
} from '../../../test/oidc-provider.ts'
import { continuesTo, PageClient } from '../../../test/web/page-client.ts'

let server: TestServer
let idp: OidcProviderFixture
let t: TenantFixture
const hex = () => randomBytes(4).toString('hex')
const domain = `v-${hex()}.example.com`

before(async () => {
  idp = await startOidcProvider()
  server = await startServer({ webhookAllowPrivate: true })
  t = await createTenant(server)
  await connectOidcIdp(server, t, idp, 'IdP', [domain])
})
after(async () => {
  await server?.close()
  await idp?.close()
})

/** "Sign in with SSO" as a browser goes through it; answers the callback's answer. */
async function ssoSignIn(who: IdpAccount) {
  const browser = new PageClient(server)
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const form = await browser.once('POST', `/t/${t.slug}/sign-in/sso`, {
    _csrf: browser.csrf(),
    email: who.email ?? '',
  })
  const started = await browser.once('GET', continuesTo(await form.text()) ?? '')
  assert.equal(started.status, 303, await started.text())
  const back = await idp.authorize(started.headers.get('location') ?? '', who)
  return browser.once('GET', back.pathname + back.search)
}

test('sso: email_verified "false", "False" or 0 is unverified: no address, nobody provisioned, UserLoginFailed', async () => {
  for (const claim of ['false', 'False', 0 as unknown as string, false]) {
    const who = { sub: `sub-${hex()}`, email: `p-${hex()}@${domain}`, email_verified: claim }
    const callback = await ssoSignIn(who)
    assert.equal(callback.status, 403, `${JSON.stringify(claim)}: ${await callback.text()}`)
    assert.equal(await userByEmail(server, t.tenantId, who.email), undefined, JSON.stringify(claim))
  }
  const failed = await auditRows(server, t.tenantId, 'UserLoginFailed')
  assert.equal(failed.length, 4)
  assert.ok(failed.every((r) => r.metadata?.reason === 'sso_user_not_provisioned'))
})

test('sso: email_verified true or "true", or no claim at all, signs in and provisions the verified address', async () => {
  for (const claim of [true, 'true', undefined]) {
    const who: IdpAccount = { sub: `sub-${hex()}`, email: `p-${hex()}@${domain}` }
    if (claim !== undefined) who.email_verified = claim
    const callback = await ssoSignIn(who)
    assert.equal(callback.status, 303, `${JSON.stringify(claim)}: ${await callback.text()}`)
    const user = await userByEmail(server, t.tenantId, who.email ?? '')
    assert.equal(user?.emailVerified, true, JSON.stringify(claim))
  }
})
