// Social sign-in under the tenant's rules and each preset's (CONTRACT §19, §21): mfaPolicy
// (a TOTP user gives the code on the next page, one without is refused), the blocking hooks
// (before_sign_up's deny creates nothing, custom_access_token's claims are in the first
// token; `context.method` social), a PKCE verifier the provider does not accept, Discord's
// `verified`, and the OpenID presets GitLab, Slack and LinkedIn through their issuers (one
// oidc-provider stands in for each, SOCIAL_PROVIDER_ENDPOINTS pointing them at it).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { after, before, type TestContext, test } from 'node:test'
import {
  auditMark,
  auditRows,
  auditSince,
  tenantSnapshot,
  userByEmail,
} from '../../../../test/db.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../../test/fixtures/mfa.ts'
import {
  type GitHubAccount,
  type GitHubStandIn,
  startGitHubStandIn,
} from '../../../../test/fixtures/social.ts'
import { receiver, verify } from '../../../../test/fixtures/webhooks.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../../test/helpers.ts'
import { type OidcProviderFixture, startOidcProvider } from '../../../../test/oidc-provider.ts'
import { PageClient, textOf } from '../../../../test/web/page-client.ts'
import { and, eq } from '../../../db/orm.ts'
import { identities, users } from '../../../db/schema.ts'

let server: TestServer
let github: GitHubStandIn
let idp: OidcProviderFixture
const hex = () => randomBytes(4).toString('hex')

before(async () => {
  github = await startGitHubStandIn()
  idp = await startOidcProvider()
  server = await startServer({
    webhookAllowPrivate: true,
    socialProviderEndpoints: {
      github: github.endpoints,
      discord: github.discordEndpoints,
      gitlab: { issuer: idp.issuer },
      slack: { issuer: idp.issuer },
      linkedin: { issuer: idp.issuer },
    },
  })
})
after(async () => {
  await server?.close()
  await github?.close()
  await idp?.close()
})

async function connection(tenant: TenantFixture, provider: string, client: object) {
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/social-connections`,
    { provider, ...client },
    { token: tenant.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.connection as { id: string; callbackUrl: string }
}

const octocat = (email = `octo-${hex()}@example.org`): GitHubAccount => ({
  id: Number.parseInt(hex(), 16),
  login: `octo${hex()}`,
  emails: [{ email, primary: true, verified: true }],
})

async function viaStandIn(
  browser: PageClient,
  tenant: TenantFixture,
  id: string,
  who: GitHubAccount,
) {
  const started = await browser.once('GET', `/t/${tenant.slug}/social/${id}`)
  assert.equal(started.status, 303, await started.text())
  const back = await github.authorize(started.headers.get('location') ?? '', who)
  return browser.once('GET', back.pathname + back.search)
}

function reply(body: unknown) {
  return (_n: number, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}

async function addHook(tenant: TenantFixture, event: string, url: string) {
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/hooks`,
    { event, url },
    { token: tenant.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.secret as string
}

test('mfaPolicy Required: a TOTP user gives the code on the next page (UserLogin method social); one without TOTP is refused', async () => {
  const tenant = await createTenant(server)
  const { id } = await connection(tenant, 'github', github.addClient())
  const person = await signup(server, tenant.slug)
  const { secret } = await enrolWithRecoveryCodes(server, tenant.slug, person.accessToken)
  // The person's GitHub is linked through their verified address.
  await server.deps.db
    .update(users)
    .set({ emailVerified: true })
    .where(eq(users.id, person.user.id))
  const required = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { mfaPolicy: 'Required' },
    {
      token: tenant.admin.accessToken,
    },
  )
  assert.equal(required.status, 200, JSON.stringify(required.body))
  const browser = new PageClient(server)
  const callback = await viaStandIn(browser, tenant, id, octocat(person.email))
  assert.equal(callback.status, 303, await callback.text())
  const page = `/t/${tenant.slug}/sign-in/sso/second-factor`
  assert.equal(callback.headers.get('location'), page)
  assert.equal(browser.cookies.get('ta_session'), undefined, 'no session before the code')
  await browser.get(page)
  const done = await browser.post(page, { method: 'totp', totpCode: totpAt(server, secret) })
  assert.equal(done.status, 200, done.html)
  assert.equal(new URL(done.url).pathname, `/t/${tenant.slug}/account`)
  const login = (await auditRows(server, tenant.tenantId, 'UserLogin')).at(-1)
  assert.equal(login?.userId, person.user.id)
  assert.equal(login?.metadata?.method, 'social')
  assert.equal(login?.metadata?.connectionId, id)

  const newcomer = octocat()
  const refused = await viaStandIn(new PageClient(server), tenant, id, newcomer)
  assert.equal(refused.status, 401, await refused.text())
  assert.equal(await userByEmail(server, tenant.tenantId, newcomer.emails[0].email), undefined)
})

test('hooks: before_sign_up’s deny creates nothing (HookDenied, method social); custom_access_token’s claims are in the first token', async (t: TestContext) => {
  const tenant = await createTenant(server)
  const { id } = await connection(tenant, 'github', github.addClient())
  const sink = await receiver(t, reply({ decision: 'deny', message: 'Invitations only.' }))
  const secret = await addHook(tenant, 'before_sign_up', sink.url)
  const who = octocat()
  const mark = await auditMark(server, tenant.tenantId)
  const before = await tenantSnapshot(server, tenant.tenantId, { audit: false })
  const callback = await viaStandIn(new PageClient(server), tenant, id, who)
  const text = await callback.text()
  assert.equal(callback.status, 403, text)
  assert.match(textOf(text), /Invitations only\./)
  const after = await tenantSnapshot(server, tenant.tenantId, { audit: false })
  // The sign-in's state was spent; nothing else changed.
  assert.deepEqual({ ...after, oauthStates: [] }, { ...before, oauthStates: [] })
  const events = await auditSince(server, tenant.tenantId, mark)
  assert.deepEqual(
    events.map((e) => e.action),
    ['HookDenied'],
  )
  assert.equal(events[0].metadata.method, 'social')
  const call = verify(secret, sink.received[0])
  assert.equal(call.context.method, 'social')
  assert.equal(call.user.email, who.emails[0].email)

  const other = await createTenant(server)
  const second = await connection(other, 'github', github.addClient())
  const claims = await receiver(t, reply({ claims: { plan: 'gold' } }))
  const claimsSecret = await addHook(other, 'custom_access_token', claims.url)
  const browser = new PageClient(server)
  const signedIn = await viaStandIn(browser, other, second.id, octocat())
  assert.equal(signedIn.status, 303, await signedIn.text())
  assert.equal(verify(claimsSecret, claims.received[0]).context.method, 'social')
  assert.equal(claimsOf(pageAccessToken(browser, other)).plan, 'gold')
})

/** The access token of the browser's page session (its sealed cookie, opened here). */
function pageAccessToken(browser: PageClient, tenant: TenantFixture): string {
  const sealed = browser.cookies.get('ta_session') ?? ''
  return JSON.parse(
    server.deps.cipher.decrypt(decodeURIComponent(sealed), `page-session:${tenant.tenantId}`),
  ).accessToken
}

const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))

test('a verifier the provider does not accept (PKCE) fails the sign-in; nothing created', async () => {
  const tenant = await createTenant(server)
  const { id } = await connection(tenant, 'github', github.addClient())
  const who = octocat()
  github.corruptChallenge = true
  try {
    const callback = await viaStandIn(new PageClient(server), tenant, id, who)
    assert.equal(callback.status, 401, await callback.text())
  } finally {
    github.corruptChallenge = false
  }
  assert.equal(await userByEmail(server, tenant.tenantId, who.emails[0].email), undefined)
  const failed = (await auditRows(server, tenant.tenantId, 'UserLoginFailed')).at(-1)
  assert.equal(failed?.metadata?.reason, 'idp_exchange_failed')
})

test('Discord: its `verified` decides whether the address is verified', async () => {
  const tenant = await createTenant(server)
  const { id } = await connection(tenant, 'discord', github.addClient())
  const verified = { ...octocat(), discordVerified: true }
  assert.equal((await viaStandIn(new PageClient(server), tenant, id, verified)).status, 303)
  assert.equal(
    (await userByEmail(server, tenant.tenantId, verified.emails[0].email))?.emailVerified,
    true,
  )
  const unverified = { ...octocat(), discordVerified: false }
  assert.equal((await viaStandIn(new PageClient(server), tenant, id, unverified)).status, 303)
  assert.equal(
    (await userByEmail(server, tenant.tenantId, unverified.emails[0].email))?.emailVerified,
    false,
  )
  const rows = await server.deps.db
    .select()
    .from(identities)
    .where(and(eq(identities.tenantId, tenant.tenantId), eq(identities.source, id)))
  assert.deepEqual(
    rows.map((r) => r.subject).sort(),
    [String(verified.id), String(unverified.id)].sort(),
  )
})

test('GitLab, Slack and LinkedIn sign in through their issuers (OpenID Connect presets)', async () => {
  const tenant = await createTenant(server)
  for (const provider of ['gitlab', 'slack', 'linkedin']) {
    const made = await connection(tenant, provider, {
      clientId: 'pending',
      clientSecret: 'pending',
    })
    const client = await idp.addClient(made.callbackUrl)
    const patched = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/social-connections/${made.id}`,
      client,
      {
        token: tenant.admin.accessToken,
      },
    )
    assert.equal(patched.status, 200, JSON.stringify(patched.body))
    const who = {
      sub: `${provider}-${hex()}`,
      email: `${provider}-${hex()}@example.com`,
      email_verified: true,
    }
    const browser = new PageClient(server)
    const started = await browser.once('GET', `/t/${tenant.slug}/social/${made.id}`)
    const authorization = started.headers.get('location') ?? ''
    assert.ok(authorization.startsWith(`${idp.issuer}/`), `${provider}: ${authorization}`)
    const back = await idp.authorize(authorization, who)
    const callback = await browser.once('GET', back.pathname + back.search)
    assert.equal(callback.status, 303, `${provider}: ${await callback.text()}`)
    const user = await userByEmail(server, tenant.tenantId, who.email)
    assert.equal(user?.emailVerified, true, provider)
    const login = (await auditRows(server, tenant.tenantId, 'UserLogin')).find(
      (r) => r.userId === user?.id,
    )
    assert.equal(login?.metadata?.provider, provider)
  }
})
