// OIDC SSO connections (CONTRACT §12) against two real OpenID providers (panva's
// oidc-provider on loopback): two connections of one tenant and one of another. A domain
// routes only to its own connection; an IdP's user lands in the tenant whose connection it
// came through and nowhere else; the identity rules (domains, existing user by email, JIT
// with defaultRole, jitProvisioning off, disabled connection, mfaPolicy) and their audit
// rows; the state bound to the tenant, the connection and the browser; enforced domains.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import * as client from 'openid-client'
import pg from 'pg'
import { auditRows, codeRows, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createApplication, oidcClient } from '../../../test/fixtures/oidc.ts'
import { passkeySignIn, registerPasskey } from '../../../test/fixtures/passkeys.ts'
import { connectOidcIdp } from '../../../test/fixtures/sso-oidc.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
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
import { and, eq } from '../../db/orm.ts'
import { identities, users } from '../../db/schema.ts'

const REDIRECT = 'https://app.example.com/callback'
let server: TestServer
let idpA: OidcProviderFixture
let idpB: OidcProviderFixture
let t1: TenantFixture
let t2: TenantFixture
const hex = () => randomBytes(4).toString('hex')
const domainA = `a-${hex()}.example.com`
const domainB = `b-${hex()}.example.com`
let a1: string
let b1: string
let a2: string

before(async () => {
  idpA = await startOidcProvider()
  idpB = await startOidcProvider()
  server = await startServer({ webhookAllowPrivate: true })
  t1 = await createTenant(server)
  t2 = await createTenant(server)
  a1 = await connect(t1, idpA, 'IdP A', [domainA])
  b1 = await connect(t1, idpB, 'IdP B', [domainB], { defaultRole: 'Admin' })
  // The other tenant trusts IdP A for the same domain.
  a2 = await connect(t2, idpA, 'IdP A of t2', [domainA])
})

after(async () => {
  await server?.close()
  await idpA?.close()
  await idpB?.close()
})

const connect = (
  t: TenantFixture,
  idp: OidcProviderFixture,
  name: string,
  domains: string[],
  extra: Record<string, unknown> = {},
) => connectOidcIdp(server, t, idp, name, domains, extra)

const account = (domain: string, overrides: Partial<IdpAccount> = {}): IdpAccount => ({
  sub: `sub-${hex()}`,
  email: `person-${hex()}@${domain}`,
  email_verified: true,
  ...overrides,
})

/** The identities linked through a connection (kind 'sso', the connection's id the source). */
const ssoLinks = (tenantId: string, connectionId: string) =>
  server.deps.db
    .select()
    .from(identities)
    .where(
      and(
        eq(identities.tenantId, tenantId),
        eq(identities.kind, 'sso'),
        eq(identities.source, connectionId),
      ),
    )

/**
 * The browser's way through "Sign in with SSO": the email form, the start page, the IdP
 * (signed in as `who`), and the callback. Answers the connection the start page chose and
 * the callback's answer.
 */
async function ssoSignIn(
  browser: PageClient,
  t: TenantFixture,
  idp: OidcProviderFixture,
  who: IdpAccount,
  email = who.email ?? '',
) {
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const form = await browser.once('POST', `/t/${t.slug}/sign-in/sso`, {
    _csrf: browser.csrf(),
    email,
  })
  const continued = await form.text()
  // A page that goes on by itself: a redirect answering the form would end at the IdP,
  // which the CSP's form-action forbids.
  assert.equal(form.status, 200, continued)
  const startPath = continuesTo(continued) ?? ''
  assert.match(startPath, new RegExp(`^/t/${t.slug}/sso/[0-9a-f-]{36}$`))
  const started = await browser.once('GET', startPath)
  assert.equal(started.status, 303, await started.text())
  const authorization = started.headers.get('location') ?? ''
  assert.ok(authorization.startsWith(`${idp.issuer}/`), `${authorization} is the right IdP`)
  const back = await idp.authorize(authorization, who)
  const callback = await browser.once('GET', back.pathname + back.search)
  return { startPath, back, callback }
}

test('sso: each domain routes to its own connection, and its IdP signs the user in to this tenant only (JIT, defaultRole, audit)', async () => {
  const browser = new PageClient(server)
  const who = account(domainA)
  const { startPath, callback } = await ssoSignIn(browser, t1, idpA, who)
  assert.equal(startPath, `/t/${t1.slug}/sso/${a1}`)
  assert.equal(callback.status, 303, await callback.text())
  assert.equal(callback.headers.get('location'), `/t/${t1.slug}/account`)
  // No authorization passes through this sign-in (web/http.ts, openerPolicy).
  assert.equal(callback.headers.get('cross-origin-opener-policy'), 'same-origin')
  const account1 = await browser.get(`/t/${t1.slug}/account`)
  assert.equal(account1.status, 200)
  assert.ok(account1.html.includes(who.email ?? ''), 'signed in as the IdP user')

  const user = await userByEmail(server, t1.tenantId, who.email ?? '')
  assert.ok(user)
  assert.equal(user.role, 'Member')
  assert.equal(user.emailVerified, true)
  assert.equal(user.status, 'Active')
  assert.equal(await userByEmail(server, t2.tenantId, who.email ?? ''), undefined)
  const login = (await auditRows(server, t1.tenantId, 'UserLogin')).find(
    (r) => r.userId === user.id,
  )
  assert.equal(login?.metadata?.method, 'sso')
  assert.equal(login?.metadata?.connectionId, a1)
  const linked = (await auditRows(server, t1.tenantId, 'SsoIdentityLinked')).filter(
    (r) => r.userId === user.id,
  )
  assert.equal(linked.length, 1)

  // The other domain goes to the other connection, whose defaultRole is Admin.
  const other = account(domainB)
  const second = await ssoSignIn(new PageClient(server), t1, idpB, other)
  assert.equal(second.startPath, `/t/${t1.slug}/sso/${b1}`)
  assert.equal(second.callback.status, 303)
  assert.equal((await userByEmail(server, t1.tenantId, other.email ?? ''))?.role, 'Admin')

  // Again through the same connection: the link, no second SsoIdentityLinked.
  const again = await ssoSignIn(new PageClient(server), t1, idpA, who)
  assert.equal(again.callback.status, 303)
  assert.equal(
    (await auditRows(server, t1.tenantId, 'SsoIdentityLinked')).filter((r) => r.userId === user.id)
      .length,
    1,
  )
})

test('sso: one IdP subject signs in to each tenant through that tenant’s own connection, as two users', async () => {
  const who = account(domainA)
  const one = await ssoSignIn(new PageClient(server), t1, idpA, who)
  const two = await ssoSignIn(new PageClient(server), t2, idpA, who)
  assert.equal(two.startPath, `/t/${t2.slug}/sso/${a2}`)
  assert.equal(one.callback.status, 303)
  assert.equal(two.callback.status, 303)
  const u1 = await userByEmail(server, t1.tenantId, who.email ?? '')
  const u2 = await userByEmail(server, t2.tenantId, who.email ?? '')
  assert.ok(u1 && u2)
  assert.notEqual(u1.id, u2.id)
  const links = await server.deps.db
    .select()
    .from(identities)
    .where(and(eq(identities.kind, 'sso'), eq(identities.subject, who.sub)))
  assert.deepEqual(
    links.map((l) => `${l.tenantId}:${l.source}:${l.userId}`).sort(),
    [`${t1.tenantId}:${a1}:${u1.id}`, `${t2.tenantId}:${a2}:${u2.id}`].sort(),
  )
})

test('sso: a state is bound to its tenant, its connection and its browser; a replayed callback is refused', async () => {
  const who = account(domainA)
  const browser = new PageClient(server)
  await browser.get(`/t/${t1.slug}/sign-in/sso`)
  const started = await browser.once('GET', `/t/${t1.slug}/sso/${a1}`)
  const back = await idpA.authorize(started.headers.get('location') ?? '', who)
  // Another tenant's callback, with the same IdP and code: refused, nobody signed in.
  const elsewhere = back.search
  const cross = await browser.once('GET', `/v1/${t2.slug}/sso/${a2}/oidc/callback${elsewhere}`)
  assert.equal(cross.status, 400)
  assert.equal(await userByEmail(server, t2.tenantId, who.email ?? ''), undefined)
  // Another connection of the same tenant.
  const sideways = await browser.once('GET', `/v1/${t1.slug}/sso/${b1}/oidc/callback${elsewhere}`)
  assert.equal(sideways.status, 400)
  // Another browser (no flow cookie): refused, and the state is not spent.
  const stranger = new PageClient(server)
  const stolen = await stranger.once('GET', back.pathname + back.search)
  assert.equal(stolen.status, 400)
  // The browser that began it finishes, once.
  const own = await browser.once('GET', back.pathname + back.search)
  assert.equal(own.status, 303, await own.text())
  assert.equal((await userByEmail(server, t1.tenantId, who.email ?? ''))?.status, 'Active')
  const replay = await browser.once('GET', back.pathname + back.search)
  assert.equal(replay.status, 400)
})

test('sso: an email outside the connection’s domains, jitProvisioning off, a disabled connection and an unmet mfaPolicy are refused (403 page, UserLoginFailed with the reason)', async () => {
  // IdP A vouching for an address of domain B: never through A's connection.
  const outsider = account(domainA, { email: `x-${hex()}@${domainB}` })
  const browser = new PageClient(server)
  await browser.get(`/t/${t1.slug}/sign-in/sso`)
  const started = await browser.once('GET', `/t/${t1.slug}/sso/${a1}`)
  const back = await idpA.authorize(started.headers.get('location') ?? '', outsider)
  const refused = await browser.once('GET', back.pathname + back.search)
  assert.equal(refused.status, 403)
  assert.match(await refused.text(), /sso_user_not_provisioned/)
  assert.equal(refused.headers.get('cross-origin-opener-policy'), 'same-origin')
  assert.equal(await userByEmail(server, t1.tenantId, outsider.email ?? ''), undefined)
  const failed = (await auditRows(server, t1.tenantId, 'UserLoginFailed')).filter(
    (r) => r.metadata?.connectionId === a1,
  )
  assert.equal(failed.at(-1)?.metadata?.reason, 'sso_user_not_provisioned')

  // No JIT: unknown users refused; an existing user with the address is linked.
  const t = await createTenant(server)
  const domain = `c-${hex()}.example.com`
  const id = await connect(t, idpA, 'No JIT', [domain], { jitProvisioning: false })
  const stranger = account(domain)
  const noJit = await ssoSignIn(new PageClient(server), t, idpA, stranger)
  assert.equal(noJit.callback.status, 403)
  assert.equal(await userByEmail(server, t.tenantId, stranger.email ?? ''), undefined)
  const existing = await signup(server, t.slug, `Known-${hex()}@${domain.toUpperCase()}`)
  const known = account(domain, { email: existing.email.toLowerCase() })
  // Signup never proved the address: whoever registered it first would keep their password
  // and sessions in the account SSO then links. Not linked until the address is confirmed.
  const unproven = await ssoSignIn(new PageClient(server), t, idpA, known)
  assert.equal(unproven.callback.status, 403, await unproven.callback.text())
  const notLinked = await server.deps.db
    .select()
    .from(identities)
    .where(
      and(
        eq(identities.tenantId, t.tenantId),
        eq(identities.kind, 'sso'),
        eq(identities.source, id),
      ),
    )
  assert.deepEqual(notLinked, [])
  const unprovenFailure = (await auditRows(server, t.tenantId, 'UserLoginFailed')).at(-1)
  assert.equal(unprovenFailure?.metadata?.reason, 'sso_user_not_provisioned')
  assert.equal(unprovenFailure?.userId, existing.user.id)
  // The IdP says its own address is unverified: the sign-in has no address, so no account.
  const unverified = account(domain, { email: existing.email.toLowerCase(), email_verified: false })
  const unverifiedSignIn = await ssoSignIn(new PageClient(server), t, idpA, unverified)
  assert.equal(unverifiedSignIn.callback.status, 403)
  await server.deps.db
    .update(users)
    .set({ emailVerified: true })
    .where(and(eq(users.tenantId, t.tenantId), eq(users.id, existing.user.id)))
  const linked = await ssoSignIn(new PageClient(server), t, idpA, known)
  assert.equal(linked.callback.status, 303, await linked.callback.text())
  const rows = await server.deps.db
    .select()
    .from(identities)
    .where(
      and(
        eq(identities.tenantId, t.tenantId),
        eq(identities.kind, 'sso'),
        eq(identities.source, id),
      ),
    )
  assert.deepEqual(
    rows.map((r) => r.userId),
    [existing.user.id],
  )

  // mfaPolicy Required: refused unless the IdP reported MFA or the connection says so.
  const required = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Required' },
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal(required.status, 200, JSON.stringify(required.body))
  const noMfa = await ssoSignIn(new PageClient(server), t, idpA, known)
  assert.equal(noMfa.callback.status, 401)
  const withMfa = await ssoSignIn(new PageClient(server), t, idpA, {
    ...known,
    amr: ['pwd', 'otp'],
  })
  assert.equal(withMfa.callback.status, 303)
  await server.request(
    'PATCH',
    `/v1/${t.slug}/sso-connections/${id}`,
    { mfaSatisfied: true },
    {
      token: t.admin.accessToken,
    },
  )
  const satisfied = await ssoSignIn(new PageClient(server), t, idpA, known)
  assert.equal(satisfied.callback.status, 303)

  // Disabled: the start page refuses, and a callback in flight signs nobody in.
  const flight = new PageClient(server)
  await flight.get(`/t/${t.slug}/sign-in/sso`)
  const began = await flight.once('GET', `/t/${t.slug}/sso/${id}`)
  const late = await idpA.authorize(began.headers.get('location') ?? '', known)
  await server.request(
    'PATCH',
    `/v1/${t.slug}/sso-connections/${id}`,
    { enabled: false },
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal((await flight.once('GET', late.pathname + late.search)).status, 403)
  assert.equal((await new PageClient(server).once('GET', `/t/${t.slug}/sso/${id}`)).status, 404)
})

test('sso: deleting a connection deletes the identities linked through it, and only those; their users stay', async () => {
  const t = await createTenant(server)
  const goneDomain = `g-${hex()}.example.com`
  const keptDomain = `k-${hex()}.example.com`
  const gone = await connect(t, idpA, 'Going', [goneDomain])
  const kept = await connect(t, idpB, 'Staying', [keptDomain])
  const who = account(goneDomain)
  const stays = account(keptDomain)
  assert.equal((await ssoSignIn(new PageClient(server), t, idpA, who)).callback.status, 303)
  assert.equal((await ssoSignIn(new PageClient(server), t, idpB, stays)).callback.status, 303)
  const linksOf = (connectionId: string) => ssoLinks(t.tenantId, connectionId)
  assert.equal((await linksOf(gone)).length, 1)
  const deleted = await server.request(
    'DELETE',
    `/v1/${t.slug}/sso-connections/${gone}`,
    undefined,
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal(deleted.status, 200, JSON.stringify(deleted.body))
  assert.deepEqual(await linksOf(gone), [])
  assert.equal((await linksOf(kept)).length, 1)
  assert.equal((await userByEmail(server, t.tenantId, who.email ?? ''))?.status, 'Active')
})

test('sso race: a connection deleted while a sign-in links through it links nobody, so no identity outlives its connection', {
  skip: process.env.DATABASE_URL?.startsWith('postgres')
    ? false
    : 'needs DATABASE_URL: the deletion is held open in a transaction of its own',
}, async () => {
  const t = await createTenant(server)
  const domain = `r-${hex()}.example.com`
  const id = await connect(t, idpA, 'Racing', [domain])
  const who = account(domain)
  const browser = new PageClient(server)
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const started = await browser.once('GET', `/t/${t.slug}/sso/${id}`)
  const back = await idpA.authorize(started.headers.get('location') ?? '', who)
  // The deletion's two statements (federation/service.ts deleteConnection), held open
  // between them while the callback runs.
  const deleter = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await deleter.connect()
  try {
    await deleter.query('BEGIN')
    await deleter.query('DELETE FROM sso_connections WHERE tenant_id = $1 AND id = $2', [
      t.tenantId,
      id,
    ])
    const callback = browser.once('GET', back.pathname + back.search)
    // The callback reaches the link and waits for the connection's row.
    const deadline = Date.now() + 10_000
    for (;;) {
      const waiting = await deleter.query(
        'SELECT 1 FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))',
      )
      if (waiting.rows.length > 0) break
      assert.ok(Date.now() < deadline, 'the sign-in never waited for the deleted connection')
      await new Promise((done) => setTimeout(done, 50))
    }
    await deleter.query(
      "DELETE FROM identities WHERE tenant_id = $1 AND kind = 'sso' AND source = $2",
      [t.tenantId, id],
    )
    await deleter.query('COMMIT')
    const refused = await callback
    assert.equal(refused.status, 401, await refused.text())
  } finally {
    await deleter.end()
  }
  assert.deepEqual(await ssoLinks(t.tenantId, id), [])
  assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
})

test('sso: an enforced domain routes the sign-in form to its connection, and its users’ password, code and passkey sign-ins answer 403 sso_required (Admins excepted)', async () => {
  const t = await createTenant(server)
  const policy = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless' },
    { token: t.admin.accessToken },
  )
  assert.equal(policy.status, 200)
  const domain = `e-${hex()}.example.com`
  const member = await signup(server, t.slug, `m-${hex()}@${domain}`)
  const { authenticator } = await registerPasskey(server, t.slug, member.accessToken)
  const adminEmail = `boss-${hex()}@${domain}`
  const boss = await signup(server, t.slug, adminEmail)
  const promoted = await server.request(
    'PATCH',
    `/v1/${t.slug}/users/${boss.user.id}`,
    { role: 'Admin' },
    { token: t.admin.accessToken },
  )
  assert.equal(promoted.status, 200, JSON.stringify(promoted.body))
  // Before enforcement the password works.
  const before = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: member.email,
    password: STRONG_PASSWORD,
  })
  assert.equal(before.status, 200)
  const id = await connect(t, idpA, 'Enforced', [domain], { enforce: true })

  // A new password account for the domain would sign in by password: refused, none made.
  const squatter = `newcomer-${hex()}@${domain}`
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await server.request(
        'POST',
        `/v1/${t.slug}/auth/signup`,
        { email: squatter, password: STRONG_PASSWORD },
        { ip: randomIp() },
      ),
      403,
      'sso_required',
    )
  })

  expectError(
    await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: member.email,
      password: STRONG_PASSWORD,
    }),
    403,
    'sso_required',
  )
  expectError(
    await passkeySignIn(server, t.slug, authenticator, { email: member.email }),
    403,
    'sso_required',
  )
  const admin = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: adminEmail,
    password: STRONG_PASSWORD,
  })
  assert.equal(admin.status, 200, JSON.stringify(admin.body))
  // request-login-code: the same answer, no code made.
  const asked = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
    email: member.email,
  })
  assert.equal(asked.status, 200, JSON.stringify(asked.body))
  assert.deepEqual(asked.body, { ok: true })
  assert.deepEqual(await codeRows(server, t.tenantId, member.user.id), [])
  const failed = (await auditRows(server, t.tenantId, 'UserLoginFailed')).at(-1)
  assert.equal(failed?.metadata?.reason, 'sso_required')

  // The hosted sign-in form sends the member to the connection.
  const browser = new PageClient(server)
  await browser.get(`/t/${t.slug}/sign-in`)
  const routed = await browser.once('POST', `/t/${t.slug}/sign-in`, {
    _csrf: browser.csrf(),
    email: member.email,
    password: STRONG_PASSWORD,
  })
  assert.equal(routed.status, 200)
  assert.equal(continuesTo(await routed.text()), `/t/${t.slug}/sso/${id}`)
  const page = await new PageClient(server).get(`/t/${t.slug}/sign-in`)
  assert.match(page.html, /Sign in with SSO/)
})

test('sso: as the sign-in step of an authorization request (§11), the browser goes back to the request and on to the application with a code; UserLogin names the client', async () => {
  const made = await createApplication(server, t1.slug, t1.admin.accessToken, {
    name: 'Planner',
    type: 'web',
    redirectUris: [REDIRECT],
    firstParty: true,
  })
  const clientId = made.application.clientId
  const config = await oidcClient(server, t1.slug, clientId, String(made.clientSecret))
  const authorize = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid email',
    code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
    code_challenge_method: 'S256',
    state: client.randomState(),
  })
  const browser = new PageClient(server, randomIp())
  const publicUrl = server.deps.config.publicUrl
  const local = (url: string) => url.replace(publicUrl, server.url)
  let url = authorize.href
  for (let hop = 0; hop < 5 && !url.endsWith(`/t/${t1.slug}/sign-in`); hop++) {
    const res = await browser.once('GET', local(url))
    url = new URL(res.headers.get('location') ?? '', local(url)).href
  }
  assert.match(url, new RegExp(`/t/${t1.slug}/sign-in$`))
  // Every answer of the sign-in is a step of the authorization, which an application may
  // run in a popup: none severs its window.opener (web/http.ts, openerPolicy).
  const opener = (res: Response) => res.headers.get('cross-origin-opener-policy') ?? 'unsafe-none'
  // A refusal first (an address outside the connection's domains): its page, whose "Back to
  // sign-in" goes on with the authorization.
  const outsider = account(domainA, { email: `x-${hex()}@${domainB}` })
  const firstTry = await browser.once('GET', `/t/${t1.slug}/sso/${a1}`)
  assert.equal(opener(firstTry), 'unsafe-none')
  const refusedBack = await idpA.authorize(firstTry.headers.get('location') ?? '', outsider)
  const refused = await browser.once('GET', refusedBack.pathname + refusedBack.search)
  assert.equal(refused.status, 403)
  assert.equal(refused.headers.get('cross-origin-opener-policy'), 'unsafe-none')
  // A link naming the connection.
  const started = await browser.once('GET', `/t/${t1.slug}/sso/${a1}`)
  const who = account(domainA)
  const back = await idpA.authorize(started.headers.get('location') ?? '', who)
  const callback = await browser.once('GET', back.pathname + back.search)
  assert.equal(callback.status, 303, await callback.text())
  assert.equal(callback.headers.get('cross-origin-opener-policy'), 'unsafe-none')
  const interaction = callback.headers.get('location') ?? ''
  assert.match(interaction, new RegExp(`^/t/${t1.slug}/authorize/`))
  url = new URL(interaction, server.url).href
  for (let hop = 0; hop < 8 && !url.startsWith(REDIRECT); hop++) {
    const res = await browser.once('GET', local(url))
    let next = res.headers.get('location')
    if (!next && res.status === 200) {
      // A page that goes on by itself (meta refresh).
      const refresh = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(await res.text())
      next = refresh ? refresh[1].replace(/&amp;/g, '&') : null
    }
    assert.ok(next, `hop ${hop} at ${url} answered ${res.status}`)
    url = new URL(next, local(url)).href
  }
  assert.ok(url.startsWith(REDIRECT), url)
  assert.ok(new URL(url).searchParams.get('code'), 'a code for the application')
  const user = await userByEmail(server, t1.tenantId, who.email ?? '')
  const login = (await auditRows(server, t1.tenantId, 'UserLogin')).find(
    (r) => r.userId === user?.id,
  )
  assert.equal(login?.metadata?.method, 'sso')
  assert.equal(login?.metadata?.clientId, clientId)
})
