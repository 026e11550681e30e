// The standard scope `roles` (CONTRACT §17, Tokens): the ID token and userinfo carry `roles`,
// the base role first, then the custom roles' names sorted, read at each token and userinfo
// request; no claim without the scope. Discovery lists the scope and the claim, and a
// third-party application's consent page names it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import { createApplication, grantThroughPages, oidcClient } from '../../../test/fixtures/oidc.ts'
import { createTenant, randomIp, signup, startTestServer } from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'

test('scope roles: the ID token and userinfo carry the base role then the custom roles sorted, live; none without the scope', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, { token: admin })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  for (const name of ['Zeta', 'alpha']) await call('POST', '/roles', { name })
  const made = await createApplication(server, tenant.slug, admin, {
    name: 'Notes Insights',
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
  assert.ok(config.serverMetadata().scopes_supported?.includes('roles'))
  assert.ok(config.serverMetadata().claims_supported?.includes('roles'))

  const who = await signup(server, tenant.slug)
  await call('PUT', `/users/${who.user.id}/roles`, { roles: ['Zeta', 'alpha'] })
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  await browser.post(`/t/${tenant.slug}/sign-in`, { email: who.email, password: who.password })

  const consents: string[] = []
  const tokens = await grantThroughPages(
    server,
    tenant.slug,
    browser,
    app,
    { scope: 'openid roles' },
    consents,
  )
  assert.equal(consents.length, 1)
  assert.match(consents[0], /See your roles in this workspace/)
  assert.deepEqual(decodeJwt(String(tokens.id_token)).roles, ['Member', 'alpha', 'Zeta'])
  const info = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(info.roles, ['Member', 'alpha', 'Zeta'])

  // Live: userinfo with the same access token, and the next ID token, follow a change.
  await call('PUT', `/users/${who.user.id}/roles`, { roles: ['Zeta'] })
  await call('PATCH', `/users/${who.user.id}`, { role: 'Admin' })
  const after = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(after.roles, ['Admin', 'Zeta'])
  const next = await grantThroughPages(server, tenant.slug, browser, app, { scope: 'openid roles' })
  assert.deepEqual(decodeJwt(String(next.id_token)).roles, ['Admin', 'Zeta'])
  await call('PUT', `/users/${who.user.id}/roles`, { roles: [] })
  const none = await client.fetchUserInfo(config, tokens.access_token, who.user.id)
  assert.deepEqual(none.roles, ['Admin'])

  // Without the scope, no claim.
  const bare = await grantThroughPages(server, tenant.slug, browser, app, {
    scope: 'openid email',
  })
  assert.equal('roles' in decodeJwt(String(bare.id_token)), false)
  const plain = await client.fetchUserInfo(config, bare.access_token, who.user.id)
  assert.equal('roles' in plain, false)
})
