// Social sign-in connections (CONTRACT §19) through the real HTTP app and database: the
// admin API and its refusals, and the browser's round trip through two presets against
// local stand-ins that follow the providers' documents: panva's oidc-provider as Google
// (SOCIAL_PROVIDER_ENDPOINTS' google issuer; the ID token's email_verified), and a GitHub
// stand-in of the OAuth and REST endpoints (test/fixtures/social.ts). The linking rules,
// the tenant's policies after the callback, the state bound to the browser and to its
// connection, and a replayed callback: each refused with nothing created or linked.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { auditRows, unchanged, userByEmail } from '../../../../test/db.ts'
import { expectError, expectValidation } from '../../../../test/envelope.ts'
import { createKey } from '../../../../test/fixtures/apikeys.ts'
import {
  type GitHubAccount,
  type GitHubStandIn,
  startGitHubStandIn,
} from '../../../../test/fixtures/social.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../../test/helpers.ts'
import {
  type IdpAccount,
  type OidcProviderFixture,
  startOidcProvider,
} from '../../../../test/oidc-provider.ts'
import { PageClient } from '../../../../test/web/page-client.ts'
import { and, eq } from '../../../db/orm.ts'
import { identities, socialConnections, users } from '../../../db/schema.ts'

let server: TestServer
let google: OidcProviderFixture
let github: GitHubStandIn
let t: TenantFixture
let other: TenantFixture
const hex = () => randomBytes(4).toString('hex')

before(async () => {
  google = await startOidcProvider()
  github = await startGitHubStandIn()
  server = await startServer({
    webhookAllowPrivate: true,
    socialProviderEndpoints: { google: { issuer: google.issuer }, github: github.endpoints },
  })
  t = await createTenant(server)
  other = await createTenant(server)
})

after(async () => {
  await server?.close()
  await google?.close()
  await github?.close()
})

const base = (slug = t.slug) => `/v1/${slug}/social-connections`
const call = (method: string, path: string, body?: unknown, token = t.admin.accessToken) =>
  server.request(method, path, body, { token })

/** A Google connection whose client is registered at the stand-in for its callbackUrl. */
async function connectGoogle(tenant: TenantFixture, extra: Record<string, unknown> = {}) {
  const made = await call(
    'POST',
    base(tenant.slug),
    { provider: 'google', clientId: 'pending', clientSecret: 'pending', ...extra },
    tenant.admin.accessToken,
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const { id, callbackUrl } = made.body.connection
  const client = await google.addClient(callbackUrl)
  const patched = await call(
    'PATCH',
    `${base(tenant.slug)}/${id}`,
    client,
    tenant.admin.accessToken,
  )
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  return id as string
}

async function connectGitHub(tenant: TenantFixture, extra: Record<string, unknown> = {}) {
  const client = github.addClient()
  const made = await call(
    'POST',
    base(tenant.slug),
    { provider: 'github', ...client, ...extra },
    tenant.admin.accessToken,
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  return made.body.connection.id as string
}

const googler = (overrides: Partial<IdpAccount> = {}): IdpAccount => ({
  sub: `g-${hex()}`,
  email: `person-${hex()}@gmail.example.com`,
  email_verified: true,
  name: 'Ada Googler',
  ...overrides,
})

const githubber = (overrides: Partial<GitHubAccount> = {}): GitHubAccount => {
  const email = `octo-${hex()}@example.org`
  return {
    id: Math.floor(Math.random() * 1e9),
    login: `octo${hex()}`,
    name: 'Octo Cat',
    emails: [
      { email: `old-${hex()}@example.org`, primary: false, verified: true },
      { email, primary: true, verified: true },
    ],
    ...overrides,
  }
}

/** The browser through the hosted button: the start page, the provider, the callback. */
async function viaGoogle(browser: PageClient, tenant: TenantFixture, id: string, who: IdpAccount) {
  const started = await browser.once('GET', `/t/${tenant.slug}/social/${id}`)
  assert.equal(started.status, 303, await started.text())
  const authorization = started.headers.get('location') ?? ''
  assert.ok(authorization.startsWith(`${google.issuer}/`), authorization)
  const back = await google.authorize(authorization, who)
  const callback = await browser.once('GET', back.pathname + back.search)
  return { authorization, back, callback }
}

async function viaGitHub(
  browser: PageClient,
  tenant: TenantFixture,
  id: string,
  who: GitHubAccount,
) {
  const started = await browser.once('GET', `/t/${tenant.slug}/social/${id}`)
  assert.equal(started.status, 303, await started.text())
  const authorization = started.headers.get('location') ?? ''
  assert.ok(authorization.startsWith(`${github.url}/login/oauth/authorize?`), authorization)
  const back = await github.authorize(authorization, who)
  const callback = await browser.once('GET', back.pathname + back.search)
  return { authorization, back, callback }
}

const identityRows = (tenantId: string, connectionId: string) =>
  server.deps.db
    .select()
    .from(identities)
    .where(and(eq(identities.tenantId, tenantId), eq(identities.source, connectionId)))

describe('the social connections API', () => {
  test('create, read, list, change and delete; the secret never answered; audited', async () => {
    const made = await call('POST', base(), {
      provider: 'google',
      clientId: 'abc.apps.googleusercontent.com',
      clientSecret: 'shh-secret',
    })
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const c = made.body.connection
    assert.equal(c.name, 'Google')
    assert.equal(c.hasClientSecret, true)
    assert.deepEqual(c.scopes, ['openid', 'email', 'profile'])
    assert.equal(c.enabled, true)
    assert.equal(c.allowSignUp, true)
    assert.equal(c.linkByVerifiedEmail, true)
    assert.equal(
      c.callbackUrl,
      `${server.deps.config.publicUrl}/v1/${t.slug}/social/${c.id}/callback`,
    )
    assert.ok(!JSON.stringify(made.body).includes('shh-secret'))
    const read = await call('GET', `${base()}/${c.id}`)
    assert.deepEqual(read.body, made.body)
    const listed = await call('GET', base())
    assert.ok(listed.body.items.some((i: { id: string }) => i.id === c.id))
    const changed = await call('PATCH', `${base()}/${c.id}`, { name: 'Google Workspace', order: 5 })
    assert.equal(changed.status, 200)
    assert.equal(changed.body.connection.name, 'Google Workspace')
    assert.equal(changed.body.connection.order, 5)
    assert.equal(changed.body.connection.hasClientSecret, true)
    const deleted = await call('DELETE', `${base()}/${c.id}`)
    assert.equal(deleted.status, 200)
    expectError(await call('GET', `${base()}/${c.id}`), 404, 'not_found')
    const actions = (await auditRows(server, t.tenantId))
      .filter((r) => r.metadata?.connectionId === c.id)
      .map((r) => r.action)
    assert.deepEqual(actions, [
      'SocialConnectionCreated',
      'SocialConnectionUpdated',
      'SocialConnectionDeleted',
    ])
  })

  test('bad input: the documented error, and nothing changed', async () => {
    const id = (
      await call('POST', base(), { provider: 'google', clientId: 'x', clientSecret: 'y' })
    ).body.connection.id
    await unchanged(server, t.tenantId, async () => {
      for (const body of [
        {},
        { provider: 'myspace', clientId: 'x', clientSecret: 'y' },
        { provider: 'google', clientId: 'x' },
        { provider: 'google', clientId: '', clientSecret: 'y' },
        { provider: 'google', clientId: 'x', clientSecret: 'y', issuer: 'https://evil.example' },
        {
          provider: 'google',
          clientId: 'x',
          clientSecret: 'y',
          endpoints: { tokenUrl: 'https://x.example' },
        },
        { provider: 'github', clientId: 'x', clientSecret: 'y', claims: { id: 'id' } },
        { provider: 'oidc', clientId: 'x', clientSecret: 'y' },
        { provider: 'oidc', clientId: 'x', clientSecret: 'y', issuer: 'not a url' },
        { provider: 'oidc', clientId: 'x', clientSecret: 'y', issuer: 'ftp://idp.example' },
        { provider: 'oauth2', clientId: 'x', clientSecret: 'y' },
        {
          provider: 'oauth2',
          clientId: 'x',
          clientSecret: 'y',
          endpoints: {
            authorizationUrl: 'https://a.example/auth',
            tokenUrl: 'https://a.example/token',
          },
        },
        {
          provider: 'oauth2',
          clientId: 'x',
          clientSecret: 'y',
          endpoints: {
            authorizationUrl: 'https://a.example/auth',
            tokenUrl: 'https://a.example/token',
            userinfoUrl: 'https://user:pw@a.example/me',
          },
        },
        {
          provider: 'oauth2',
          clientId: 'x',
          clientSecret: 'y',
          endpoints: {
            authorizationUrl: 'https://a.example/auth',
            tokenUrl: 'https://a.example/token',
            userinfoUrl: 'https://a.example/me',
          },
          claims: { id: 'data..id' },
        },
        { provider: 'google', clientId: 'x', clientSecret: 'y', order: 1.5 },
        { provider: 'google', clientId: 'x', clientSecret: 'y', enabled: 'yes' },
        { provider: 'google', clientId: 'x', clientSecret: 'y', scopes: ['a b'] },
      ]) {
        const res = await call('POST', base(), body)
        expectError(res, 400, 'validation')
      }
      for (const [patch, status, reason] of [
        [{ issuer: 'https://evil.example' }, 400, 'validation'],
        [{ claims: { id: 'x' } }, 400, 'validation'],
        [{ name: '' }, 400, 'validation'],
      ] as const) {
        expectError(await call('PATCH', `${base()}/${id}`, patch), status, reason)
      }
      for (const path of [
        `${base()}/not-a-uuid`,
        `${base()}/00000000-0000-4000-8000-000000000000`,
      ]) {
        expectError(await call('GET', path), 404, 'not_found')
        expectError(await call('PATCH', path, { name: 'x' }), 404, 'not_found')
        expectError(await call('DELETE', path), 404, 'not_found')
      }
    })
  })

  test('null clears issuer, endpoints and claims where the provider goes without them; clearing what it needs is 400, nothing changed', async () => {
    const make = async (body: Record<string, unknown>) => {
      const res = await call('POST', base(), { clientId: 'x', clientSecret: 'y', ...body })
      assert.equal(res.status, 200, JSON.stringify(res.body))
      return res.body.connection.id as string
    }
    const ghes = {
      authorizationUrl: 'https://ghe.example.com/login/oauth/authorize',
      tokenUrl: 'https://ghe.example.com/login/oauth/access_token',
      apiUrl: 'https://ghe.example.com/api/v3',
    }
    const oauth2Endpoints = {
      authorizationUrl: 'https://a.example/auth',
      tokenUrl: 'https://a.example/token',
      userinfoUrl: 'https://a.example/me',
    }
    const gitlab = await make({ provider: 'gitlab', issuer: 'https://gitlab.example.com' })
    const microsoft = await make({ provider: 'microsoft', issuer: 'organizations' })
    const github = await make({ provider: 'github', endpoints: ghes })
    const oauth2 = await make({
      provider: 'oauth2',
      endpoints: oauth2Endpoints,
      claims: { id: 'data.user.id', emailVerified: 'data.user.verified' },
    })
    for (const [id, patch, field] of [
      [gitlab, { issuer: null }, 'issuer'],
      [microsoft, { issuer: null }, 'issuer'],
      [github, { endpoints: null }, 'endpoints'],
      [oauth2, { claims: null }, 'claims'],
    ] as const) {
      const cleared = await call('PATCH', `${base()}/${id}`, patch)
      assert.equal(cleared.status, 200, JSON.stringify(cleared.body))
      assert.equal(cleared.body.connection[field], null, field)
      const read = await call('GET', `${base()}/${id}`)
      assert.equal(read.body.connection[field], null, `${field} read back`)
      const [row] = await server.deps.db
        .select()
        .from(socialConnections)
        .where(eq(socialConnections.id, id))
      assert.equal(row[field], null, `${field} stored cleared`)
      const updated = (await auditRows(server, t.tenantId, 'SocialConnectionUpdated')).filter(
        (r) => r.metadata?.connectionId === id,
      )
      assert.deepEqual(updated.at(-1)?.metadata?.changed, [field])
    }
    // oauth2 still reads its endpoints; an oidc connection its issuer: clearing either is 400.
    const oidc = await make({ provider: 'oidc', issuer: 'https://idp.example.com' })
    await unchanged(server, t.tenantId, async () => {
      expectValidation(
        await call('PATCH', `${base()}/${oauth2}`, { endpoints: null }),
        'body.endpoints',
      )
      expectValidation(await call('PATCH', `${base()}/${oidc}`, { issuer: null }), 'body.issuer')
      expectValidation(
        await call('PATCH', `${base()}/${oidc}`, { name: 'Renamed', issuer: null }),
        'body.issuer',
      )
    })
    assert.deepEqual(
      (await call('GET', `${base()}/${oauth2}`)).body.connection.endpoints,
      oauth2Endpoints,
    )
    assert.equal(
      (await call('GET', `${base()}/${oidc}`)).body.connection.issuer,
      'https://idp.example.com',
    )
    // What a connection trusts is an Admin's to clear, not an API key's.
    const { plaintext: key } = await createKey(server, t.slug, t.admin.accessToken)
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await call('PATCH', `${base()}/${oauth2}`, { claims: null }, key),
        403,
        'api_key_not_allowed',
      )
    })
  })

  test('another tenant’s connection is not found, and a Member may not manage connections', async () => {
    const theirs = await connectGitHub(other)
    const member = await signup(server, t.slug)
    await unchanged(server, [t.tenantId, other.tenantId], async () => {
      expectError(await call('GET', `${base()}/${theirs}`), 404, 'not_found')
      expectError(await call('PATCH', `${base()}/${theirs}`, { name: 'mine' }), 404, 'not_found')
      expectError(await call('DELETE', `${base()}/${theirs}`), 404, 'not_found')
      expectError(await call('GET', base(), undefined, member.accessToken), 403, 'admin_required')
      expectError(
        await call(
          'POST',
          base(),
          { provider: 'github', clientId: 'a', clientSecret: 'b' },
          member.accessToken,
        ),
        403,
        'admin_required',
      )
    })
    const rows = await server.deps.db
      .select()
      .from(socialConnections)
      .where(eq(socialConnections.id, theirs))
    assert.equal(rows[0]?.name, 'GitHub')
  })

  test('an API key creates no connection and changes nothing it trusts; it may rename, disable, order and delete', async () => {
    const { plaintext: key } = await createKey(server, t.slug, t.admin.accessToken)
    const id = await connectGitHub(t)
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await call('POST', base(), { provider: 'github', clientId: 'a', clientSecret: 'b' }, key),
        403,
        'api_key_not_allowed',
      )
      for (const patch of [
        { clientSecret: 'theirs' },
        { clientId: 'theirs' },
        { linkByVerifiedEmail: true },
        { allowSignUp: true },
        {
          endpoints: {
            authorizationUrl: 'https://evil.example/a',
            tokenUrl: 'https://evil.example/t',
            apiUrl: 'https://evil.example',
          },
        },
        { name: 'Renamed', clientSecret: 'theirs' },
      ]) {
        expectError(await call('PATCH', `${base()}/${id}`, patch, key), 403, 'api_key_not_allowed')
      }
    })
    const renamed = await call(
      'PATCH',
      `${base()}/${id}`,
      { name: 'Code', enabled: false, order: 2 },
      key,
    )
    assert.equal(renamed.status, 200, JSON.stringify(renamed.body))
    assert.equal((await call('DELETE', `${base()}/${id}`, undefined, key)).status, 200)
  })
})

describe('signing in with Google (an OpenID Connect preset)', () => {
  test('a first sign-in makes a verified account and links the identity; the next one signs in through the link', async () => {
    const id = await connectGoogle(t)
    const who = googler()
    const browser = new PageClient(server)
    const { authorization, callback } = await viaGoogle(browser, t, id, who)
    const asked = new URL(authorization).searchParams
    assert.equal(asked.get('code_challenge_method'), 'S256')
    assert.ok(asked.get('nonce'))
    assert.equal(asked.get('scope'), 'openid email profile')
    assert.equal(callback.status, 303, await callback.text())
    assert.equal(callback.headers.get('location'), `/t/${t.slug}/account`)
    const account = await browser.get(`/t/${t.slug}/account`)
    assert.equal(account.status, 200)
    assert.ok(account.html.includes(who.email ?? ''))
    const user = await userByEmail(server, t.tenantId, who.email ?? '')
    assert.ok(user)
    assert.equal(user.emailVerified, true)
    assert.equal(user.role, 'Member')
    const links = await identityRows(t.tenantId, id)
    assert.equal(links.length, 1)
    assert.equal(links[0].subject, who.sub)
    assert.equal(links[0].kind, 'social')
    const login = (await auditRows(server, t.tenantId, 'UserLogin')).find(
      (r) => r.userId === user.id,
    )
    assert.equal(login?.metadata?.method, 'social')
    assert.equal(login?.metadata?.provider, 'google')
    assert.equal(login?.metadata?.connectionId, id)
    assert.equal(
      (await auditRows(server, t.tenantId, 'IdentityLinked')).filter((r) => r.userId === user.id)
        .length,
      1,
    )

    const again = await viaGoogle(new PageClient(server), t, id, { ...who, email: who.email })
    assert.equal(again.callback.status, 303)
    assert.equal((await identityRows(t.tenantId, id)).length, 1)
    assert.equal(
      (await auditRows(server, t.tenantId, 'IdentityLinked')).filter((r) => r.userId === user.id)
        .length,
      1,
    )
  })

  test('an existing account with a verified address is linked; with linkByVerifiedEmail off it is not', async () => {
    const id = await connectGoogle(t)
    const off = await connectGoogle(t, { linkByVerifiedEmail: false })
    const person = await signup(server, t.slug)
    await server.deps.db
      .update(users)
      .set({ emailVerified: true })
      .where(eq(users.id, person.user.id))
    const refused = await viaGoogle(
      new PageClient(server),
      t,
      off,
      googler({ email: person.email }),
    )
    assert.equal(refused.callback.status, 400, await refused.callback.text())
    assert.equal((await identityRows(t.tenantId, off)).length, 0)

    const linked = await viaGoogle(new PageClient(server), t, id, googler({ email: person.email }))
    assert.equal(linked.callback.status, 303, await linked.callback.text())
    const rows = await identityRows(t.tenantId, id)
    assert.equal(rows.length, 1)
    assert.equal(rows[0].userId, person.user.id)
  })

  test('never into an unconfirmed account, nor on an address the provider did not verify: the "account exists" page', async () => {
    const id = await connectGoogle(t)
    const unconfirmed = await signup(server, t.slug)
    const first = await viaGoogle(
      new PageClient(server),
      t,
      id,
      googler({ email: unconfirmed.email }),
    )
    assert.equal(first.callback.status, 400)
    assert.match(await first.callback.text(), /already exists/)
    const verified = await signup(server, t.slug)
    await server.deps.db
      .update(users)
      .set({ emailVerified: true })
      .where(eq(users.id, verified.user.id))
    const second = await viaGoogle(
      new PageClient(server),
      t,
      id,
      googler({ email: verified.email, email_verified: false }),
    )
    assert.equal(second.callback.status, 400)
    assert.equal((await identityRows(t.tenantId, id)).length, 0)
    const failed = (await auditRows(server, t.tenantId, 'UserLoginFailed')).filter(
      (r) => r.metadata?.connectionId === id,
    )
    assert.deepEqual(
      failed.map((r) => r.metadata?.reason),
      ['email_taken', 'email_taken'],
    )
  })

  test('allowSignUp off creates nobody; a disabled connection signs nobody in', async () => {
    const id = await connectGoogle(t, { allowSignUp: false })
    const who = googler()
    const res = await viaGoogle(new PageClient(server), t, id, who)
    assert.equal(res.callback.status, 403)
    assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    const disabled = await connectGoogle(t)
    const browser = new PageClient(server)
    const started = await browser.once('GET', `/t/${t.slug}/social/${disabled}`)
    const back = await google.authorize(started.headers.get('location') ?? '', who)
    await call('PATCH', `${base()}/${disabled}`, { enabled: false })
    const callback = await browser.once('GET', back.pathname + back.search)
    assert.equal(callback.status, 403)
    assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    const start = await new PageClient(server).once('GET', `/t/${t.slug}/social/${disabled}`)
    assert.equal(start.status, 404)
  })

  test('the state: another browser’s, a replayed callback, another connection’s: refused, nothing created', async () => {
    const id = await connectGoogle(t)
    const second = await connectGoogle(t)
    const who = googler()
    const mine = new PageClient(server)
    const started = await mine.once('GET', `/t/${t.slug}/social/${id}`)
    const back = await google.authorize(started.headers.get('location') ?? '', who)
    // Another browser brings the callback (login CSRF): refused, and the state not spent.
    const stranger = await new PageClient(server).once('GET', back.pathname + back.search)
    assert.equal(stranger.status, 400)
    // The same answer at another connection's callback.
    const elsewhere = await mine.once('GET', back.pathname.replace(id, second) + back.search)
    assert.equal(elsewhere.status, 400)
    assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    const ok = await mine.once('GET', back.pathname + back.search)
    assert.equal(ok.status, 303, await ok.text())
    const replay = await mine.once('GET', back.pathname + back.search)
    assert.equal(replay.status, 400)
    // Another tenant's connection id under this tenant: not found.
    const theirs = await connectGoogle(other)
    const foreign = await new PageClient(server).once('GET', `/t/${t.slug}/social/${theirs}`)
    assert.equal(foreign.status, 404)
    const foreignCallback = await mine.once(
      'GET',
      `/v1/${t.slug}/social/${theirs}/callback?state=x&code=y`,
    )
    assert.equal(foreignCallback.status, 404)
  })

  test('an ID token for another audience or from another issuer is refused; nothing created', async () => {
    const id = await connectGoogle(t)
    for (const change of [
      (c: Record<string, unknown>) => ({ ...c, aud: 'someone-else' }),
      (c: Record<string, unknown>) => ({ ...c, iss: 'https://accounts.google.com.evil.example' }),
    ]) {
      const who = googler()
      google.rewriteIdToken(change)
      try {
        const res = await viaGoogle(new PageClient(server), t, id, who)
        assert.equal(res.callback.status, 401, await res.callback.text())
      } finally {
        google.tamperIdToken = undefined
      }
      assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    }
  })

  test('enforced SSO domains and requireVerifiedEmail apply after the callback', async () => {
    const tenant = await createTenant(server)
    const id = await connectGoogle(tenant)
    const domain = `corp-${hex()}.example.com`
    const sso = await call(
      'POST',
      `/v1/${tenant.slug}/sso-connections`,
      {
        name: 'Corp',
        type: 'oidc',
        domains: [domain],
        enforce: true,
        oidc: { issuer: google.issuer, clientId: 'c', clientSecret: 's' },
      },
      tenant.admin.accessToken,
    )
    assert.equal(sso.status, 200, JSON.stringify(sso.body))
    const corp = googler({ email: `me@${domain}` })
    const refused = await viaGoogle(new PageClient(server), tenant, id, corp)
    assert.equal(refused.callback.status, 403)
    assert.equal(await userByEmail(server, tenant.tenantId, corp.email ?? ''), undefined)

    const policy = await call(
      'PATCH',
      `/v1/${tenant.slug}/tenant`,
      { requireVerifiedEmail: true },
      tenant.admin.accessToken,
    )
    assert.ok(policy.status === 200, JSON.stringify(policy.body))
    const unverified = googler({ email_verified: false })
    const res = await viaGoogle(new PageClient(server), tenant, id, unverified)
    assert.equal(res.callback.status, 403)
    assert.equal(await userByEmail(server, tenant.tenantId, unverified.email ?? ''), undefined)
    const fine = await viaGoogle(new PageClient(server), tenant, id, googler())
    assert.equal(fine.callback.status, 303)
  })
})

describe('signing in with GitHub (OAuth 2.0 and its REST API)', () => {
  test('the primary verified address of /user/emails; the id of /user; PKCE sent', async () => {
    const id = await connectGitHub(t)
    const who = githubber()
    const primary = who.emails.find((e) => e.primary)?.email ?? ''
    const { authorization, callback } = await viaGitHub(new PageClient(server), t, id, who)
    assert.equal(new URL(authorization).searchParams.get('scope'), 'read:user user:email')
    assert.equal(callback.status, 303, await callback.text())
    const user = await userByEmail(server, t.tenantId, primary)
    assert.ok(user)
    assert.equal(user.emailVerified, true)
    const rows = await identityRows(t.tenantId, id)
    assert.equal(rows.length, 1)
    assert.equal(rows[0].subject, String(who.id))
    assert.ok(github.verifiers.at(-1), 'a code_verifier was sent')
  })

  test('an account without a verified address creates and links nothing, but signs in where already linked', async () => {
    const id = await connectGitHub(t)
    const who = githubber()
    const unverified = { ...who, emails: who.emails.map((e) => ({ ...e, verified: false })) }
    const res = await viaGitHub(new PageClient(server), t, id, unverified)
    assert.equal(res.callback.status, 401, await res.callback.text())
    assert.equal((await identityRows(t.tenantId, id)).length, 0)
    for (const e of who.emails)
      assert.equal(await userByEmail(server, t.tenantId, e.email), undefined)
    // Linked first with a verified address, the same account signs in without one later.
    assert.equal((await viaGitHub(new PageClient(server), t, id, who)).callback.status, 303)
    const later = await viaGitHub(new PageClient(server), t, id, unverified)
    assert.equal(later.callback.status, 303, await later.callback.text())
  })

  test('the user saying no at GitHub, or a code the token endpoint refuses: refused, nothing created', async () => {
    const id = await connectGitHub(t)
    const who = githubber()
    const browser = new PageClient(server)
    const started = await browser.once('GET', `/t/${t.slug}/social/${id}`)
    const denied = await github.authorize(started.headers.get('location') ?? '', who, true)
    const answer = await browser.once('GET', denied.pathname + denied.search)
    assert.equal(answer.status, 401)
    // A wrong client secret: GitHub answers 200 with an error, which is no token.
    const wrong = await connectGitHub(t)
    await call('PATCH', `${base()}/${wrong}`, { clientSecret: 'not-the-secret' })
    const res = await viaGitHub(new PageClient(server), t, wrong, who)
    assert.equal(res.callback.status, 401)
    for (const e of who.emails)
      assert.equal(await userByEmail(server, t.tenantId, e.email), undefined)
  })
})

describe('the hosted sign-in page', () => {
  test('one button per enabled connection, in order, with no request to a third party', async () => {
    const tenant = await createTenant(server)
    const second = await connectGitHub(tenant, { name: 'GitHub', order: 2 })
    const first = await connectGoogle(tenant, { name: 'Google', order: 1 })
    const hidden = await connectGitHub(tenant, { name: 'Hidden', enabled: false })
    const page = await new PageClient(server).get(`/t/${tenant.slug}/sign-in`)
    assert.equal(page.status, 200)
    const hrefs = [...page.html.matchAll(/href="(\/t\/[^"]+\/social\/[^"]+)"/g)].map((m) => m[1])
    assert.deepEqual(hrefs, [
      `/t/${tenant.slug}/social/${first}`,
      `/t/${tenant.slug}/social/${second}`,
    ])
    assert.ok(!page.html.includes(hidden))
    assert.ok(!/(src|href)="https?:\/\//.test(page.html), 'nothing loaded from elsewhere')
  })
})

describe('connecting a provider from the account page', () => {
  /** A user signed in with a password on the hosted pages (a recent proof). */
  async function signedIn(tenant: TenantFixture) {
    const person = await signup(server, tenant.slug)
    const browser = new PageClient(server)
    await browser.get(`/t/${tenant.slug}/sign-in`)
    const page = await browser.post(`/t/${tenant.slug}/sign-in`, {
      email: person.email,
      password: person.password,
    })
    assert.match(page.url, /\/account$/)
    return { person, browser, page }
  }

  /** "Connect", the provider (GitHub stand-in) as `who`, and the callback. */
  async function connect(
    browser: PageClient,
    tenant: TenantFixture,
    id: string,
    who: GitHubAccount,
  ) {
    await browser.get(`/t/${tenant.slug}/account`)
    const form = await browser.once('POST', `/t/${tenant.slug}/account/connect/${id}`, {
      _csrf: browser.csrf(),
    })
    const text = await form.text()
    assert.equal(form.status, 200, text)
    const target = /content="0;\s*url=([^"]+)"/i.exec(text)?.[1]?.replaceAll('&amp;', '&')
    assert.ok(target?.startsWith(`${github.url}/login/oauth/authorize?`), text)
    const back = await github.authorize(target ?? '', who)
    return browser.once('GET', back.pathname + back.search)
  }

  test('Connect links the provider to the signed-in account; it then signs that account in', async () => {
    const id = await connectGitHub(t)
    const { person, browser, page } = await signedIn(t)
    assert.ok(page.html.includes(`/t/${t.slug}/account/connect/${id}`), 'a Connect button')
    const who = githubber()
    const callback = await connect(browser, t, id, who)
    assert.equal(callback.status, 303, await callback.text())
    assert.equal(callback.headers.get('location'), `/t/${t.slug}/account?done=identity-linked`)
    const rows = await identityRows(t.tenantId, id)
    assert.equal(rows.length, 1)
    assert.equal(rows[0].userId, person.user.id)
    const linked = (await auditRows(server, t.tenantId, 'IdentityLinked')).filter(
      (r) => r.userId === person.user.id,
    )
    assert.equal(linked.length, 1)
    const account = await browser.get(`/t/${t.slug}/account`)
    assert.ok(account.html.includes('GitHub'))
    assert.ok(!account.html.includes(`/t/${t.slug}/account/connect/${id}`), 'no second Connect')
    const listed = await server.request('GET', `/v1/${t.slug}/me/identities`, undefined, {
      token: person.accessToken,
    })
    assert.equal(listed.status, 200)
    assert.deepEqual(
      listed.body.items.map((i: { provider: string; connectionId: string }) => [
        i.provider,
        i.connectionId,
      ]),
      [['github', id]],
    )
    // The GitHub account signs in to this user, whatever address it carries now.
    const again = await viaGitHub(new PageClient(server), t, id, {
      ...who,
      emails: [{ email: `other-${hex()}@example.org`, primary: true, verified: true }],
    })
    assert.equal(again.callback.status, 303, await again.callback.text())
    const login = (await auditRows(server, t.tenantId, 'UserLogin')).at(-1)
    assert.equal(login?.userId, person.user.id)
  })

  test('an identity linked to another account is refused and nothing moves; an old proof asks "Confirm it’s you" first', async () => {
    const id = await connectGitHub(t)
    const who = githubber()
    assert.equal((await viaGitHub(new PageClient(server), t, id, who)).callback.status, 303)
    const [owner] = await identityRows(t.tenantId, id)
    const { browser } = await signedIn(t)
    const refused = await connect(browser, t, id, who)
    assert.equal(refused.status, 409, await refused.text())
    const after = await identityRows(t.tenantId, id)
    assert.deepEqual(after, [owner])

    server.clock.advance(11 * 60)
    try {
      await browser.get(`/t/${t.slug}/account`)
      const form = await browser.once('POST', `/t/${t.slug}/account/connect/${id}`, {
        _csrf: browser.csrf(),
      })
      assert.equal(form.status, 200)
      const html = await form.text()
      assert.match(html, /confirm it/i)
      assert.ok(!html.includes(github.url), 'the provider is not asked before the proof')
    } finally {
      server.clock.advance(-11 * 60)
    }
  })

  test('remove: gone with its audit row, unless it is the last way in (409 last_sign_in_method)', async () => {
    const id = await connectGitHub(t)
    const { person, browser } = await signedIn(t)
    assert.equal((await connect(browser, t, id, githubber())).status, 303)
    const [row] = await identityRows(t.tenantId, id)
    // Someone who signed up through GitHub: no password, no passkey, no other identity.
    const stranger = githubber()
    const strangerBrowser = new PageClient(server)
    assert.equal((await viaGitHub(strangerBrowser, t, id, stranger)).callback.status, 303)
    const theirs = (await identityRows(t.tenantId, id)).find(
      (r) => r.subject === String(stranger.id),
    )
    assert.ok(theirs)
    const token = { token: person.accessToken }
    await unchanged(server, t.tenantId, async () => {
      for (const path of [
        `/v1/${t.slug}/me/identities/not-a-uuid`,
        `/v1/${t.slug}/me/identities/${theirs.id}`,
      ]) {
        expectError(await server.request('DELETE', path, undefined, token), 404, 'not_found')
      }
    })
    // Removing a way to sign in needs a recent proof (CONTRACT §16, as removing a passkey).
    server.clock.advance(11 * 60)
    try {
      await unchanged(server, t.tenantId, async () => {
        expectError(
          await server.request('DELETE', `/v1/${t.slug}/me/identities/${row.id}`, undefined, token),
          401,
          'reauthentication_required',
        )
      })
    } finally {
      server.clock.advance(-11 * 60)
    }
    await strangerBrowser.get(`/t/${t.slug}/account`)
    const last = await strangerBrowser.once(
      'POST',
      `/t/${t.slug}/account/identities/${theirs.id}/remove`,
      { _csrf: strangerBrowser.csrf() },
    )
    assert.equal(last.status, 409, await last.text())
    assert.ok(
      (await identityRows(t.tenantId, id)).some((r) => r.id === theirs.id),
      'kept',
    )

    await browser.get(`/t/${t.slug}/account`)
    const removed = await browser.once('POST', `/t/${t.slug}/account/identities/${row.id}/remove`, {
      _csrf: browser.csrf(),
    })
    assert.equal(removed.status, 303, await removed.text())
    assert.equal(
      (await identityRows(t.tenantId, id)).filter((r) => r.userId === person.user.id).length,
      0,
    )
    const unlinked = (await auditRows(server, t.tenantId, 'IdentityUnlinked')).filter(
      (r) => r.userId === person.user.id,
    )
    assert.equal(unlinked.length, 1)
    assert.equal(unlinked[0].metadata?.provider, 'github')
  })
})

describe('the API start (GET social/{id}/start)', () => {
  test('return_to: only a path of the tenant’s own pages; the browser lands there once signed in', async () => {
    const id = await connectGitHub(t)
    for (const bad of [
      'https://evil.example/phish',
      '//evil.example/phish',
      `/t/${other.slug}/account`,
      `/t/${t.slug}/../../v1/${t.slug}/me`,
      `/t/${t.slug}\\@evil.example`,
      '/v1/somewhere',
    ]) {
      const browser = new PageClient(server)
      const res = await browser.once(
        'GET',
        `/v1/${t.slug}/social/${id}/start?return_to=${encodeURIComponent(bad)}`,
      )
      assert.equal(res.status, 400, bad)
      assert.equal(res.headers.get('location'), null, bad)
    }
    const browser = new PageClient(server)
    const back = `/t/${t.slug}/account?from=app`
    const started = await browser.once(
      'GET',
      `/v1/${t.slug}/social/${id}/start?return_to=${encodeURIComponent(back)}`,
    )
    assert.equal(started.status, 303, await started.text())
    const answer = await github.authorize(started.headers.get('location') ?? '', githubber())
    const callback = await browser.once('GET', answer.pathname + answer.search)
    assert.equal(callback.status, 303, await callback.text())
    assert.equal(callback.headers.get('location'), back)
  })
})
