// POST me/password, a first password for an account without one (issue 30's gap: a user who
// signed up through a social connection or an emailed code had no way to get one, since
// PATCH me/password asks the current one), through the real HTTP app and database: the
// password works, the other sessions end, it is audited and mailed, and the account's last
// outside identity may go once it has one. Every refusal answers its documented error with
// nothing changed: a password already there, an old proof (CONTRACT §16), the password
// rules (too short, weak, breached), a PasswordlessOnly tenant, an enforced SSO domain, an API key, an impersonation
// token; and two racing requests set one password.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditRows, setTenant, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { mailedLoginCode } from '../../../test/fixtures/passwordless.ts'
import { type GitHubStandIn, startGitHubStandIn } from '../../../test/fixtures/social.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { PageClient } from '../../../test/web/page-client.ts'

let sink: SmtpSink
let github: GitHubStandIn
let server: TestServer
let t: TenantFixture
let connectionId: string

before(async () => {
  sink = await new SmtpSink().start()
  github = await startGitHubStandIn()
  server = await startServer({
    smtpUrl: sink.url,
    webhookAllowPrivate: true,
    socialProviderEndpoints: { github: github.endpoints },
  })
  t = await passwordlessTenant()
  const made = await server.request(
    'POST',
    `/v1/${t.slug}/social-connections`,
    { provider: 'github', ...github.addClient() },
    { token: t.admin.accessToken },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  connectionId = made.body.connection.id
})
after(async () => {
  await server?.close()
  await github?.close()
  await sink?.stop()
})

const NEW_PASSWORD = 'lantern-orchard-copper-64'

/** A tenant whose unknown addresses sign up by an emailed code (users without a password). */
async function passwordlessTenant() {
  const tenant = await createTenant(server)
  await setTenant(server, tenant.slug, {
    authPolicy: 'PasswordAndPasswordless',
    passwordlessJitSignup: true,
  })
  return tenant
}

/** A session of `email` from an emailed code: a new account without a password, if unknown. */
async function byCode(email: string, slug = t.slug) {
  const code = await mailedLoginCode(server, sink, slug, email)
  const res = await server.request(
    'POST',
    `/v1/${slug}/auth/verify-login-code`,
    { email, code },
    { ip: randomIp() },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { accessToken: string; refreshToken: string; user: { id: string } }
}

const setPassword = (token: string, body: unknown, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/me/password`, body, { token })
const me = (token: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me`, undefined, { token })

/** Someone who signed up through GitHub: no password, no passkey, one identity. */
async function githubUser() {
  const email = uniqueEmail('octo')
  const browser = new PageClient(server, randomIp())
  const started = await browser.once('GET', `/t/${t.slug}/social/${connectionId}`)
  assert.equal(started.status, 303, await started.text())
  const back = await github.authorize(started.headers.get('location') ?? '', {
    id: Math.floor(Math.random() * 1e9),
    login: 'octo',
    emails: [{ email, primary: true, verified: true }],
  })
  const callback = await browser.once('GET', back.pathname + back.search)
  assert.equal(callback.status, 303, await callback.text())
  const session = await byCode(email)
  const identities = await server.request('GET', `/v1/${t.slug}/me/identities`, undefined, {
    token: session.accessToken,
  })
  assert.equal(identities.body.items.length, 1)
  return { email, session, identityId: identities.body.items[0].id as string }
}

describe('POST me/password: a first password', () => {
  test('a social user sets one: it signs in, other sessions end, audited and alerted; the last identity may go then', async () => {
    const { email, session, identityId } = await githubUser()
    const other = await byCode(email)
    assert.equal((await me(session.accessToken)).body.hasPassword, false)
    const identity = `/v1/${t.slug}/me/identities/${identityId}`
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('DELETE', identity, undefined, { token: session.accessToken }),
        409,
        'last_sign_in_method',
      )
    })

    await server.deps.mailer.drain()
    const mails = sink.to(email).length
    const set = await setPassword(session.accessToken, { newPassword: NEW_PASSWORD })
    assert.equal(set.status, 200, JSON.stringify(set.body))
    assert.deepEqual(set.body, { ok: true })
    assert.equal((await me(session.accessToken)).body.hasPassword, true)
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email,
      password: NEW_PASSWORD,
    })
    assert.equal(login.status, 200, JSON.stringify(login.body))
    // As a change of password: the other sessions end, this one stays.
    expectError(
      await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
        refreshToken: other.refreshToken,
      }),
      401,
      'session_revoked',
    )
    assert.equal((await me(session.accessToken)).status, 200)
    const user = await userByEmail(server, t.tenantId, email)
    const rows = (await auditRows(server, t.tenantId, 'UserPasswordChanged')).filter(
      (r) => r.userId === user?.id,
    )
    assert.equal(rows.length, 1)
    assert.deepEqual(rows[0].metadata, { via: 'set', sessionsEnded: 2 })
    const alert = await sink.waitFor(email, mails + 1)
    assert.match(alert.subject, /^Security alert: a password was set for your account\b/)

    // A second POST is refused: the password is changed with PATCH and the current one.
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await setPassword(session.accessToken, { newPassword: 'another-long-phrase-85' }),
        409,
        'password_exists',
      )
    })
    const removed = await server.request('DELETE', identity, undefined, {
      token: session.accessToken,
    })
    assert.equal(removed.status, 200, JSON.stringify(removed.body))
  })

  test('an account with a password: 409 password_exists, nothing changed', async () => {
    const member = await signup(server, t.slug)
    assert.equal((await me(member.accessToken)).body.hasPassword, true)
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await setPassword(member.accessToken, { newPassword: NEW_PASSWORD }),
        409,
        'password_exists',
      )
    })
    const old = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: member.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(old.status, 200, 'the password it had still signs in')
  })

  test('without a proof in the last 10 minutes: 401 reauthentication_required; me/reauthenticate lets it', async () => {
    const email = uniqueEmail('late')
    const session = await byCode(email)
    server.clock.advance(11 * 60)
    try {
      await unchanged(server, t.tenantId, async () => {
        expectError(
          await setPassword(session.accessToken, { newPassword: NEW_PASSWORD }),
          401,
          'reauthentication_required',
        )
      })
      // A login code proves it again (CONTRACT §16, for users without a password).
      await server.deps.mailer.drain()
      const before = sink.to(email).length
      const asked = await server.request('POST', `/v1/${t.slug}/auth/request-login-code`, {
        email,
      })
      assert.equal(asked.status, 200)
      const code = await sink.codeAfter(email, before)
      const proved = await server.request(
        'POST',
        `/v1/${t.slug}/me/reauthenticate`,
        { code },
        { token: session.accessToken },
      )
      assert.equal(proved.status, 200, JSON.stringify(proved.body))
      const set = await setPassword(session.accessToken, { newPassword: NEW_PASSWORD })
      assert.equal(set.status, 200, JSON.stringify(set.body))
    } finally {
      server.clock.advance(-11 * 60)
    }
  })

  test('the rules of a new password: too short or long, too weak, breached, no password; nothing changed', async () => {
    const session = await byCode(uniqueEmail('rules'))
    await unchanged(server, t.tenantId, async () => {
      expectValidation(
        await setPassword(session.accessToken, { newPassword: 'short-pass' }),
        'body.newPassword',
      )
      expectValidation(
        await setPassword(session.accessToken, { newPassword: 'x'.repeat(1025) }),
        'body.newPassword',
      )
      expectValidation(await setPassword(session.accessToken, {}))
      expectValidation(await setPassword(session.accessToken, { newPassword: 42 }))
      expectError(
        await setPassword(session.accessToken, { newPassword: 'qwerty123456' }),
        400,
        'password_too_weak',
      )
      // breachedPasswordPolicy block (the default): the shipped list.
      expectError(
        await setPassword(session.accessToken, { newPassword: 'password12345' }),
        400,
        'password_breached',
      )
    })
    assert.equal((await me(session.accessToken)).body.hasPassword, false)
  })

  test('a PasswordlessOnly tenant takes no password: 403 password_login_disabled', async () => {
    const tenant = await passwordlessTenant()
    const session = await byCode(uniqueEmail('only-codes'), tenant.slug)
    await setTenant(server, tenant.slug, { authPolicy: 'PasswordlessOnly' })
    await unchanged(server, tenant.tenantId, async () => {
      expectError(
        await setPassword(session.accessToken, { newPassword: NEW_PASSWORD }, tenant.slug),
        403,
        'password_login_disabled',
      )
    })
  })

  test('an address of an enforced SSO domain: 403 sso_required (its way in is the connection)', async () => {
    const tenant = await passwordlessTenant()
    const domain = `corp-${Math.random().toString(36).slice(2, 8)}.example.com`
    const session = await byCode(`someone@${domain}`, tenant.slug)
    const sso = await server.request(
      'POST',
      `/v1/${tenant.slug}/sso-connections`,
      {
        name: 'Corp',
        type: 'oidc',
        domains: [domain],
        enforce: true,
        oidc: { issuer: 'https://idp.corp.example', clientId: 'c', clientSecret: 's' },
      },
      { token: tenant.admin.accessToken },
    )
    assert.equal(sso.status, 200, JSON.stringify(sso.body))
    await unchanged(server, tenant.tenantId, async () => {
      expectError(
        await setPassword(session.accessToken, { newPassword: NEW_PASSWORD }, tenant.slug),
        403,
        'sso_required',
      )
    })
  })

  test('an API key and an impersonation token are refused, nothing changed', async () => {
    const email = uniqueEmail('target')
    const session = await byCode(email)
    const key = await insertApiKey(server, t.tenantId)
    const impersonated = await server.request(
      'POST',
      `/v1/${t.slug}/users/${session.user.id}/impersonate`,
      { reason: 'support ticket' },
      { token: t.admin.accessToken },
    )
    assert.equal(impersonated.status, 200, JSON.stringify(impersonated.body))
    await unchanged(server, t.tenantId, async () => {
      expectError(await setPassword(key, { newPassword: NEW_PASSWORD }), 401, 'user_token_required')
      expectError(
        await setPassword(impersonated.body.accessToken, { newPassword: NEW_PASSWORD }),
        403,
        'impersonation_forbidden',
      )
    })
  })

  test('two racing requests set one password: the other answers 409 password_exists', async () => {
    const email = uniqueEmail('race')
    const session = await byCode(email)
    const answers = await Promise.all(
      ['first-racing-phrase-17', 'second-racing-phrase-29'].map((newPassword) =>
        setPassword(session.accessToken, { newPassword }),
      ),
    )
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], JSON.stringify(answers))
    const lost = answers.find((a) => a.status === 409)
    assert.equal(lost?.body.details?.reason, 'password_exists')
    const user = await userByEmail(server, t.tenantId, email)
    const rows = (await auditRows(server, t.tenantId, 'UserPasswordChanged')).filter(
      (r) => r.userId === user?.id,
    )
    assert.equal(rows.length, 1, 'one password set, one audit row')
  })
})
