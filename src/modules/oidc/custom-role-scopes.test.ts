// Custom roles grant resource scopes (CONTRACT §17, Tokens; §11 API resources): a scope whose
// `roles` name a custom role goes to its holders, and so does every scope a custom role's
// `resourceScopes` list; read at every consent, authorization and refresh, so a role given
// later makes the consent ask again for the scope refused before, and a role taken away
// drops the scope at the next refresh.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  createApiResource,
  createApplication,
  grantThroughPages,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'

const REDIRECT = 'https://app.example.com/callback'
const NOTES = 'https://notes.example.com/api'

async function setup(server: TestServer) {
  const tenant = await createTenant(server)
  const admin = tenant.admin.accessToken
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await server.request(method, `/v1/${tenant.slug}${path}`, body, { token: admin })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  const auditor = (await request('POST', '/roles', { name: 'Auditor' })).role
  const api = await createApiResource(server, tenant.slug, admin, {
    name: 'Notes API',
    identifier: NOTES,
    scopes: [
      { name: 'notes:read', description: 'Read your notes' },
      // Any case names the role; it is stored by the role's own name.
      { name: 'notes:audit', description: 'Audit every note', roles: ['auditor'] },
      { name: 'notes:export', description: 'Export every note', roles: ['Admin'] },
    ],
  })
  const exporter = (
    await request('POST', '/roles', {
      name: 'Exporter',
      resourceScopes: [{ resource: NOTES, scopes: ['notes:export'] }],
    })
  ).role
  const who = await signup(server, tenant.slug)
  const setRoles = (roles: string[]) => request('PUT', `/users/${who.user.id}/roles`, { roles })
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${tenant.slug}/sign-in`)
  const signedIn = await browser.post(`/t/${tenant.slug}/sign-in`, {
    email: who.email,
    password: who.password,
  })
  assert.match(signedIn.url, /\/account$/)
  const application = async (firstParty: boolean) => {
    const made = await createApplication(server, tenant.slug, admin, {
      name: firstParty ? 'Team Notes' : 'Notes Insights',
      type: 'web',
      redirectUris: [REDIRECT],
      firstParty,
    })
    return {
      clientId: made.application.clientId,
      clientSecret: String(made.clientSecret),
      redirectUri: REDIRECT,
    }
  }
  return { tenant, admin, request, auditor, exporter, api, who, setRoles, browser, application }
}

test("a scope's roles may name a custom role: stored by the role's name, renamed with it, gone when it is deleted", async (t) => {
  const server = await startTestServer(t)
  const { request, api, auditor } = await setup(server)
  const scopesOf = async () => (await request('GET', `/api-resources/${api.id}`)).apiResource.scopes
  assert.deepEqual(
    (await scopesOf()).map((s: { roles: string[] }) => s.roles),
    [['Member', 'Admin'], ['Auditor'], ['Admin']],
  )
  await request('PATCH', `/roles/${auditor.id}`, { name: 'Reviewer' })
  assert.deepEqual((await scopesOf())[1].roles, ['Reviewer'])
  await request('DELETE', `/roles/${auditor.id}`)
  assert.deepEqual((await scopesOf())[1].roles, [])
})

test("an unknown role or an organization role in a scope's roles is 400 validation naming it, and nothing changes", async (t) => {
  const server = await startTestServer(t)
  const { tenant, admin, api, request } = await setup(server)
  await request('POST', '/roles', { name: 'Board', kind: 'organization' })
  const post = (roles: string[]) =>
    server.request(
      'POST',
      `/v1/${tenant.slug}/api-resources`,
      {
        name: 'Other',
        identifier: 'https://other.example.com/api',
        scopes: [{ name: 'a' }, { name: 'b', roles: ['Member', ...roles] }],
      },
      { token: admin },
    )
  const patch = (roles: string[]) =>
    server.request(
      'PATCH',
      `/v1/${tenant.slug}/api-resources/${api.id}`,
      { scopes: [{ name: 'notes:read', roles }] },
      { token: admin },
    )
  for (const roles of [['Nobody'], ['Board'], ['']]) {
    const created = await unchanged(server, tenant.tenantId, () => post(roles))
    expectValidation(created, roles[0] === '' ? undefined : 'body.scopes.1.roles.1')
    const patched = await unchanged(server, tenant.tenantId, () => patch(['Admin', ...roles]))
    expectValidation(patched, roles[0] === '' ? undefined : 'body.scopes.0.roles.1')
  }
  const other = await server.request(
    'POST',
    `/v1/${tenant.slug}/api-resources`,
    { name: 'x', identifier: NOTES, scopes: [{ name: 'a', roles: ['Auditor'] }] },
    { token: admin },
  )
  expectError(other, 409, 'identifier_taken')
})

test('a third-party application: the consent asks what the roles grant, asks again for a refused scope once a role grants it, and the tokens follow the roles', async (t) => {
  const server = await startTestServer(t)
  const { browser, tenant, application, setRoles } = await setup(server)
  const app = await application(false)
  const asked = { scope: 'openid notes:read notes:audit notes:export', resource: NOTES }
  const consents: string[] = []
  const authorize = async () => {
    const tokens = await grantThroughPages(server, tenant.slug, browser, app, asked, consents)
    return decodeJwt(tokens.access_token).scope
  }
  assert.equal(await authorize(), 'notes:read')
  assert.equal(consents.length, 1)
  assert.match(consents[0], /Read your notes/)
  assert.doesNotMatch(consents[0], /Audit every note|Export every note/)
  // Remembered: the refused scopes are not asked while no role grants them.
  assert.equal(await authorize(), 'notes:read')
  assert.equal(consents.length, 1)

  // A role named in the scope's roles: asked again, only for what is new.
  await setRoles(['Auditor'])
  assert.equal(await authorize(), 'notes:read notes:audit')
  assert.equal(consents.length, 2)
  assert.match(consents[1], /Audit every note/)
  assert.doesNotMatch(consents[1], /Read your notes|Export every note/)

  // A role whose resourceScopes list the scope.
  await setRoles(['Auditor', 'Exporter'])
  assert.equal(await authorize(), 'notes:read notes:audit notes:export')
  assert.equal(consents.length, 3)
  assert.match(consents[2], /Export every note/)

  // Taken away: the grant keeps them, the tokens do not carry them, nothing is asked.
  await setRoles(['Exporter'])
  assert.equal(await authorize(), 'notes:read notes:export')
  await setRoles([])
  assert.equal(await authorize(), 'notes:read')
  assert.equal(consents.length, 3)
})

test('a first-party application: granted what the roles grant without a consent page; a role taken away drops its scope at the next refresh, one given later is granted at the next authorization', async (t) => {
  const server = await startTestServer(t)
  const { browser, tenant, application, setRoles } = await setup(server)
  const app = await application(true)
  await setRoles(['Exporter'])
  const asked = {
    scope: 'openid offline_access notes:read notes:audit notes:export',
    resource: NOTES,
  }
  const consents: string[] = []
  const first = await grantThroughPages(server, tenant.slug, browser, app, asked, consents)
  assert.equal(decodeJwt(first.access_token).scope, 'notes:read notes:export')
  assert.ok(first.refresh_token)

  const config = await oidcClient(server, tenant.slug, app.clientId, app.clientSecret)
  await setRoles([])
  const refreshed = await client.refreshTokenGrant(config, first.refresh_token, { resource: NOTES })
  assert.equal(decodeJwt(refreshed.access_token).scope, 'notes:read')
  assert.equal(refreshed.scope, 'notes:read')

  // notes:audit was refused at the first authorization; the role given now grants it.
  await setRoles(['Auditor'])
  const again = await grantThroughPages(server, tenant.slug, browser, app, asked, consents)
  assert.equal(decodeJwt(again.access_token).scope, 'notes:read notes:audit')
  const next = await client.refreshTokenGrant(config, String(again.refresh_token), {
    resource: NOTES,
  })
  assert.equal(decodeJwt(next.access_token).scope, 'notes:read notes:audit')
  assert.equal(consents.length, 0)
})
