// Resource scopes follow the user's current role (CONTRACT §11, API resources; issue 36 F3):
// a scope whose `roles` name only Admin is in an Admin's tokens, and once that Admin is
// demoted neither the refresh token issued before nor a new authorization in the same
// browser (whose grant still lists the scope) mints it again.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import {
  createApiResource,
  createApplication,
  grantThroughPages,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import { createTenant, randomIp, signup, startTestServer } from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

test('a demoted Admin loses the Admin-only resource scopes at the next refresh and the next authorization', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const api = await createApiResource(server, tenant.slug, admin, {
    name: 'Notes API',
    identifier: 'https://notes.example.com/api',
    scopes: [
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:admin', description: 'Manage everyone’s notes', roles: ['Admin'] },
    ],
  })
  const made = await createApplication(server, tenant.slug, admin, {
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
  const setRole = async (role: string) => {
    const res = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/users/${who.user.id}`,
      { role },
      { token: admin },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  await setRole('Admin')

  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  const signedIn = await browser.post(`/t/${tenant.slug}/sign-in`, {
    email: who.email,
    password: who.password,
  })
  assert.match(signedIn.url, /\/account$/)
  const asked = {
    scope: 'openid offline_access notes:read notes:admin',
    resource: api.identifier,
  }
  const first = await grantThroughPages(server, tenant.slug, browser, app, asked)
  assert.equal(decodeJwt(first.access_token).scope, 'notes:read notes:admin')
  assert.ok(first.refresh_token)

  await setRole('Member')
  const config = await oidcClient(server, tenant.slug, app.clientId, app.clientSecret)
  // The refresh token issued while an Admin still works, without the Admin-only scope.
  const refreshed = await client.refreshTokenGrant(config, first.refresh_token, {
    resource: api.identifier,
  })
  const access = decodeJwt(refreshed.access_token)
  assert.equal(access.scope, 'notes:read')
  assert.equal(access.aud, api.identifier)
  assert.equal(refreshed.scope, 'notes:read')
  // A new authorization in the same browser: the grant is the one made while an Admin.
  const again = await grantThroughPages(server, tenant.slug, browser, app, asked)
  assert.equal(decodeJwt(again.access_token).scope, 'notes:read')
  assert.ok(again.refresh_token)
  const next = await client.refreshTokenGrant(config, again.refresh_token, {
    resource: api.identifier,
  })
  assert.equal(decodeJwt(next.access_token).scope, 'notes:read')

  // The role is data read at each issue: promoted again, the scope is back.
  await setRole('Admin')
  const promoted = await client.refreshTokenGrant(config, String(next.refresh_token), {
    resource: api.identifier,
  })
  assert.equal(decodeJwt(promoted.access_token).scope, 'notes:read notes:admin')
})
