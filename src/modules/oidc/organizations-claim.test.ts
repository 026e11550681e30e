// The standard scope `organizations` (CONTRACT §18, Provider): the ID token and userinfo
// carry `organizations` (the ids of the user's organizations in this tenant) and
// `organization_roles` (`"{orgId}:{role}"`), read at each token and userinfo request; an
// organization of another tenant never shows, and no claim without the scope. Discovery
// lists the scope and its claims; a third-party application's consent page names it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import { createApplication, grantThroughPages, oidcClient } from '../../../test/fixtures/oidc.ts'
import { createTenant, randomIp, signup, startTestServer } from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

test('scope organizations: the ID token and userinfo carry this tenant’s memberships and roles, live; none without the scope', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const other = await createTenant(server)
  const as =
    (slug: string, token: string) =>
    async (method: string, path: string, body = {}) => {
      const res = await server.request(method, `/v1/${slug}${path}`, body, { token })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      return res.body
    }
  const admin = as(tenant.slug, tenant.admin.accessToken)
  const otherAdmin = as(other.slug, other.admin.accessToken)
  for (const name of ['Billing', 'Support']) {
    await admin('POST', '/roles', { name, kind: 'organization' })
  }
  const acme = (await admin('POST', '/organizations', { name: 'Acme' })).organization
  const globex = (await admin('POST', '/organizations', { name: 'Globex' })).organization
  const made = await createApplication(server, tenant.slug, tenant.admin.accessToken, {
    name: 'Partner Portal',
    type: 'web',
    redirectUris: [REDIRECT],
    firstParty: false,
  })
  const app = {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
  }
  const config = await oidcClient(server, tenant.slug, app.clientId, app.clientSecret)
  assert.ok(config.serverMetadata().scopes_supported?.includes('organizations'))

  const who = await signup(server, tenant.slug)
  await admin('PUT', `/organizations/${acme.id}/members/${who.user.id}`, {
    roles: ['Support', 'Billing'],
  })
  await admin('PUT', `/organizations/${globex.id}/members/${who.user.id}`, { roles: [] })
  // Another tenant's organization, with a member of its own: never in this tenant's claims.
  const elsewhere = (await otherAdmin('POST', '/organizations', { name: 'Acme' })).organization
  const stranger = await signup(server, other.slug)
  await otherAdmin('PUT', `/organizations/${elsewhere.id}/members/${stranger.user.id}`, {
    roles: [],
  })

  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  await browser.post(`/t/${tenant.slug}/sign-in`, { email: who.email, password: who.password })
  const consents: string[] = []
  const tokens = await grantThroughPages(
    server,
    tenant.slug,
    browser,
    app,
    { scope: 'openid organizations' },
    consents,
  )
  assert.equal(consents.length, 1)
  assert.match(consents[0], /See your organizations in this workspace and your roles in them/)
  const ids = [acme.id, globex.id]
  const roles = [`${acme.id}:Billing`, `${acme.id}:Support`]
  const idToken = decodeJwt(String(tokens.id_token))
  assert.deepEqual(idToken.organizations, ids)
  assert.deepEqual(idToken.organization_roles, roles)
  const info = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(info.organizations, ids)
  assert.deepEqual(info.organization_roles, roles)

  // Live: a membership removed and a role changed show at the next userinfo request.
  await admin('DELETE', `/organizations/${globex.id}/members/${who.user.id}`)
  await admin('PUT', `/organizations/${acme.id}/members/${who.user.id}`, { roles: ['Billing'] })
  const after = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(after.organizations, [acme.id])
  assert.deepEqual(after.organization_roles, [`${acme.id}:Billing`])
  await admin('DELETE', `/organizations/${acme.id}/members/${who.user.id}`)
  const none = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(none.organizations, [])
  assert.deepEqual(none.organization_roles, [])

  // The other tenant's member sees its own organization only.
  const theirs = new PageClient(server, randomIp())
  const theirApp = await createApplication(server, other.slug, other.admin.accessToken, {
    name: 'Partner Portal',
    type: 'web',
    redirectUris: [REDIRECT],
  })
  await theirs.get(`/t/${other.slug}/sign-in`)
  await theirs.post(`/t/${other.slug}/sign-in`, {
    email: stranger.email,
    password: stranger.password,
  })
  const their = await grantThroughPages(
    server,
    other.slug,
    theirs,
    {
      clientId: theirApp.application.clientId,
      clientSecret: String(theirApp.clientSecret),
      redirectUri: REDIRECT,
    },
    { scope: 'openid organizations' },
  )
  assert.deepEqual(decodeJwt(String(their.id_token)).organizations, [elsewhere.id])

  // Without the scope, no claim.
  const bare = await grantThroughPages(server, tenant.slug, browser, app, { scope: 'openid email' })
  assert.equal('organizations' in decodeJwt(String(bare.id_token)), false)
  const plain = await client.fetchUserInfo(config, bare.access_token, who.user.id)
  assert.equal('organizations' in plain, false)
  assert.equal('organization_roles' in plain, false)
})
