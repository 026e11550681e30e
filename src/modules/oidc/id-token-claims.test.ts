// The ID token carries the claims of the scopes granted (CONTRACT §11, Flows; issue 36):
// `email` → email, email_verified; `profile` → name, given_name, family_name where known,
// updated_at; as userinfo answers them, so a library that reads only the ID token
// (Auth.js, express-openid-connect's req.oidc.user, passport's profile) has the address.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import { createApplication, grantThroughPages, oidcClient } from '../../../test/fixtures/oidc.ts'
import { createTenant, randomIp, signup, startTestServer } from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

test('a code flow with openid email profile: the ID token carries email, email_verified and the profile claims, as userinfo does', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'Team Notes',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  const app = {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
  }
  const who = await signup(server, tenant.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  await browser.post(`/t/${tenant.slug}/sign-in`, { email: who.email, password: who.password })

  const tokens = await grantThroughPages(server, tenant.slug, browser, app, {
    scope: 'openid email profile',
  })
  const claims = decodeJwt(String(tokens.id_token))
  assert.equal(claims.sub, who.user.id)
  assert.equal(claims.email, who.email)
  assert.equal(claims.email_verified, false)
  assert.equal(typeof claims.updated_at, 'number')
  // A user without a name has no name claims, never null ones (OIDC Core §5.3.2).
  assert.equal('name' in claims, false)
  assert.equal('given_name' in claims, false)
  const config = await oidcClient(server, tenant.slug, app.clientId, app.clientSecret)
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  for (const name of ['email', 'email_verified', 'updated_at'] as const) {
    assert.deepEqual(claims[name], userinfo[name], name)
  }

  // Only the scopes granted: openid alone carries no address.
  const bare = await grantThroughPages(server, tenant.slug, browser, app, { scope: 'openid' })
  const only = decodeJwt(String(bare.id_token))
  assert.equal(only.sub, who.user.id)
  assert.equal('email' in only, false)
  assert.equal('updated_at' in only, false)
})
