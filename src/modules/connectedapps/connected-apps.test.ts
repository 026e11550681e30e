// Connected applications (CONTRACT §11, Consent): GET me/applications lists the grants the
// signed-in user made through the real authorization flow (hosted pages, consent page,
// code exchanged by openid-client); DELETE me/applications/{clientId} revokes the grant with
// every code and token issued under it, at once (the refresh token is refused at the token
// endpoint, the access token inactive at introspection), audited; only the user's own grant
// at its own tenant, only with a user's token, and a bad client id changes nothing.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import * as client from 'openid-client'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  createApplication,
  grantThroughPages,
  oauthError,
  oidcClient,
} from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  signup,
  startSecondInstance,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { PageClient } from '../../../test/web/page-client.ts'
import { and, eq } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'
import type { ConnectedApplicationList } from './schemas.ts'

const REDIRECT = 'https://app.example.com/callback'

let server: TestServer

before(async (ctx) => {
  server = await startTestServer(ctx)
})

type App = { clientId: string; clientSecret: string; redirectUri: string; name: string }

async function application(t: TenantFixture, name: string, firstParty: boolean): Promise<App> {
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name,
    type: 'web',
    redirectUris: [REDIRECT],
    firstParty,
  })
  return {
    clientId: made.application.clientId,
    clientSecret: String(made.clientSecret),
    redirectUri: REDIRECT,
    name,
  }
}

/** A new user of `t`, signed in on the hosted pages of a browser without JavaScript. */
async function person(t: TenantFixture) {
  const user = await signup(server, t.slug)
  const browser = new PageClient(server, randomIp())
  await browser.get(`/t/${t.slug}/sign-in`)
  const page = await browser.post(`/t/${t.slug}/sign-in`, {
    email: user.email,
    password: user.password,
  })
  assert.match(page.url, /\/account$/)
  return { ...user, userId: user.user.id as string, browser }
}

/** `who` allows `app` (a third-party app asks for offline_access with prompt=consent). */
function grant(t: TenantFixture, who: { browser: PageClient }, app: App) {
  return grantThroughPages(server, t.slug, who.browser, app, { prompt: 'consent' })
}

const list = (slug: string, token: string) =>
  server.request('GET', `/v1/${slug}/me/applications`, undefined, { token })
const revoke = (slug: string, token: string, clientId: string) =>
  server.request('DELETE', `/v1/${slug}/me/applications/${clientId}`, undefined, { token })

async function introspect(t: TenantFixture, app: App, token: string) {
  const config = await oidcClient(server, t.slug, app.clientId, app.clientSecret)
  return client.tokenIntrospection(config, token)
}

describe('GET me/applications', () => {
  test('lists the applications the user granted, with their scopes, once each; none before', async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const notes = await application(t, 'Team Notes', true)
    const ada = await person(t)
    assert.deepEqual((await list(t.slug, ada.accessToken)).body, { items: [] })

    await grant(t, ada, planner)
    await grantThroughPages(server, t.slug, ada.browser, notes, { scope: 'openid profile' })
    // A second authorization of the same application is still one item.
    await grant(t, ada, planner)

    const res = await list(t.slug, ada.accessToken)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const items = res.body.items as ConnectedApplicationList['items']
    assert.deepEqual(
      items.map((i) => [i.clientId, i.name, [...i.scopes].sort()]).sort(),
      [
        [notes.clientId, 'Team Notes', ['openid', 'profile']],
        [planner.clientId, 'Gadget Planner', ['email', 'offline_access', 'openid']],
      ].sort(),
    )
    for (const item of items) {
      assert.deepEqual(Object.keys(item).sort(), ['clientId', 'grantedAt', 'name', 'scopes'])
      assert.ok(!Number.isNaN(Date.parse(item.grantedAt)), item.grantedAt)
    }
    assert.ok(items[0].grantedAt >= items[1].grantedAt, 'newest first')
  })
})

describe('DELETE me/applications/{clientId}', () => {
  test('revokes the grant and its tokens at once: the refresh token is refused, the access token inactive and refused at userinfo; audited', async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    const tokens = await grant(t, ada, planner)
    assert.ok(tokens.refresh_token, 'offline_access was granted')
    assert.equal((await introspect(t, planner, tokens.access_token)).active, true)
    const config = await oidcClient(server, t.slug, planner.clientId, planner.clientSecret)
    const info = await client.fetchUserInfo(config, tokens.access_token, ada.userId)
    assert.equal(info.sub, ada.userId)

    const mark = await auditMark(server, t.tenantId)
    const res = await revoke(t.slug, ada.accessToken, planner.clientId)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ok: true })

    const refused = await oauthError(client.refreshTokenGrant(config, tokens.refresh_token))
    assert.deepEqual(refused, { error: 'invalid_grant', status: 400 })
    assert.equal((await introspect(t, planner, tokens.access_token)).active, false)
    await assert.rejects(client.fetchUserInfo(config, tokens.access_token, ada.userId))
    assert.deepEqual((await list(t.slug, ada.accessToken)).body, { items: [] })
    const left = await server.deps.db
      .select({ model: oidcModels.model })
      .from(oidcModels)
      .where(and(eq(oidcModels.tenantId, t.tenantId), eq(oidcModels.accountId, ada.userId)))
    assert.deepEqual(
      left.map((r) => r.model).filter((m) => m !== 'Session'),
      [],
      'no grant, code or token of the user is left',
    )

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.actorType, e.actorId, e.userId]),
      [['ApplicationConsentRevoked', 'user', ada.userId, ada.userId]],
    )
    const metadata = events[0].metadata as { clientId: string; name: string; scopes: string[] }
    assert.equal(metadata.clientId, planner.clientId)
    assert.equal(metadata.name, 'Gadget Planner')
    assert.deepEqual([...metadata.scopes].sort(), ['email', 'offline_access', 'openid'])

    // Revoked already: nothing to revoke.
    await unchanged(server, t.tenantId, async () =>
      expectError(await revoke(t.slug, ada.accessToken, planner.clientId), 404, 'not_found'),
    )
    // The application can ask again, and the user allow it again.
    const again = await grant(t, ada, planner)
    assert.equal((await introspect(t, planner, again.access_token)).active, true)
  })

  test('revoked on one instance, refused at once on another (the tokens are rows, no cache)', async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    const tokens = await grant(t, ada, planner)
    const second = await startSecondInstance(server)
    try {
      const there = await oidcClient(second, t.slug, planner.clientId, planner.clientSecret)
      assert.equal((await client.tokenIntrospection(there, tokens.access_token)).active, true)
      const res = await revoke(t.slug, ada.accessToken, planner.clientId)
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal((await client.tokenIntrospection(there, tokens.access_token)).active, false)
      const refused = await oauthError(
        client.refreshTokenGrant(there, String(tokens.refresh_token)),
      )
      assert.equal(refused.error, 'invalid_grant')
    } finally {
      await second.close()
    }
  })

  test("another user's grant is neither listed nor revocable; theirs keeps working", async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    const bob = await person(t)
    const tokens = await grant(t, ada, planner)
    assert.deepEqual((await list(t.slug, bob.accessToken)).body, { items: [] })
    await unchanged(server, t.tenantId, async () =>
      expectError(await revoke(t.slug, bob.accessToken, planner.clientId), 404, 'not_found'),
    )
    assert.equal((await list(t.slug, ada.accessToken)).body.items.length, 1)
    assert.equal((await introspect(t, planner, tokens.access_token)).active, true)
  })

  test("another tenant's: its application is unknown here, its user's token is refused", async () => {
    const t = await createTenant(server)
    const other = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    const eve = await person(other)
    await grant(t, ada, planner)
    await unchanged(server, [t.tenantId, other.tenantId], async () => {
      expectError(await revoke(other.slug, eve.accessToken, planner.clientId), 404, 'not_found')
      expectError(await revoke(t.slug, eve.accessToken, planner.clientId), 401, 'token_invalid')
      expectError(await list(t.slug, eve.accessToken), 401, 'token_invalid')
    })
    assert.deepEqual((await list(other.slug, eve.accessToken)).body, { items: [] })
    assert.equal((await list(t.slug, ada.accessToken)).body.items.length, 1)
  })

  test('a client id that is not one (other characters, encoded tricks): 400; unknown or too long: 404; nothing changed', async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    await grant(t, ada, planner)
    await unchanged(server, t.tenantId, async () => {
      for (const bad of ['', 'abc%20def', 'abc.def', '%C3%A9t%C3%A9', 'a%2Fb', '*']) {
        const res = await revoke(t.slug, ada.accessToken, bad)
        assert.equal(res.status, 400, `${bad}: ${JSON.stringify(res.body)}`)
        expectError(res, 400, 'validation')
      }
      expectError(await revoke(t.slug, ada.accessToken, 'no-such-client'), 404, 'not_found')
      // Past the router's 100 characters no route matches.
      expectError(await revoke(t.slug, ada.accessToken, 'a'.repeat(101)), 404, 'route_not_found')
    })
    assert.equal((await list(t.slug, ada.accessToken)).body.items.length, 1)
  })

  test('needs a user token: none, an API key (401 user_token_required)', async () => {
    const t = await createTenant(server)
    const planner = await application(t, 'Gadget Planner', false)
    const ada = await person(t)
    await grant(t, ada, planner)
    const key = await insertApiKey(server, t.tenantId)
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('GET', `/v1/${t.slug}/me/applications`),
        401,
        'token_missing',
      )
      expectError(await list(t.slug, key), 401, 'user_token_required')
      expectError(await revoke(t.slug, key, planner.clientId), 401, 'user_token_required')
      expectError(await revoke(t.slug, t.admin.accessToken, planner.clientId), 404, 'not_found')
    })
  })
})
