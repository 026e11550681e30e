// Every route is reachable through the SDK and a test calls each one (issue 11): each
// operationId of OPERATIONS is called through createClient (or createAdminClient, for
// what a back end does with an API key) against the real service, with arguments that
// reach its handler, and its success answered. A wrapper records each call; the set of
// called operationIds must equal OPERATIONS, so a new route without a call fails here.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { png } from '../../test/fixtures/logos.ts'
import { totpAt } from '../../test/fixtures/mfa.ts'
import { discoveryConfig, newAccount, redirectUriOf } from '../../test/fixtures/oauth.ts'
import { grantThroughPages } from '../../test/fixtures/oidc.ts'
import { SoftAuthenticator } from '../../test/fixtures/passkeys.ts'
import {
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from '../../test/helpers.ts'
import { type OidcProviderFixture, startOidcProvider } from '../../test/oidc-provider.ts'
import { SmtpSink } from '../../test/smtp-sink.ts'
import { PageClient } from '../../test/web/page-client.ts'
import {
  type AdminClient,
  AuthServiceError,
  type Client,
  createAdminClient,
  createClient,
  OPERATIONS,
} from '../src/index.ts'

let sink: SmtpSink
let idp: OidcProviderFixture
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  idp = await startOidcProvider()
  server = await startTestServer(t, { smtpUrl: sink.url, idp: discoveryConfig(idp.issuer) })
})
after(async () => {
  await sink.stop()
  await idp.close()
})

const called = new Set<string>()

/** The client, with each method call recorded in `called` by its operationId. */
function tracked<C extends Client | AdminClient>(client: C): C {
  return new Proxy(client, {
    get(target, name, receiver) {
      const value: unknown = Reflect.get(target, name, receiver)
      if (typeof name !== 'string' || typeof value !== 'function') return value
      return (...args: unknown[]) => {
        called.add(name)
        return (value as (...a: unknown[]) => unknown)(...args)
      }
    },
  })
}

/** The code of the newest mail to `email` after `count` earlier ones. */
async function mailedCode(email: string, count: number): Promise<string> {
  return sink.codeAfter(email, count)
}

test('every operationId is called through the SDK against the real service', async () => {
  const started = performance.now()
  const slug = uniqueSlug('sdk')
  const pub = tracked(createClient({ baseUrl: server.url, tenant: slug }))

  // Service routes: no tenant, no token.
  assert.deepEqual(await pub.getHealth(), { status: 'ok' })
  assert.equal((await pub.getReadiness()).status, 'ready')
  const doc = (await pub.getOpenApiDocument()) as { openapi: string; paths: object }
  assert.match(doc.openapi, /^3\./)
  assert.deepEqual(await pub.getJwks(), { keys: [] }) // HS256: no public keys

  // A tenant and its first admin.
  const adminEmail = uniqueEmail('admin')
  const created = await pub.createTenant({
    body: {
      tenant: { slug, name: 'SDK Tenant' },
      admin: { email: adminEmail, password: STRONG_PASSWORD },
    },
  })
  assert.equal(created.user.email, adminEmail)
  assert.equal(created.user.role, 'Admin')
  const admin = tracked(
    createClient({ baseUrl: server.url, tenant: slug, token: created.accessToken }),
  )
  assert.equal((await pub.getAuthConfig()).authPolicy, 'PasswordOnly')
  // No CAPTCHA yet: no ALTCHA challenge (CONTRACT §21); with ALTCHA on, one.
  await assert.rejects(pub.getCaptchaChallenge(), { status: 404 })
  await admin.updateTenant({ body: { captcha: { provider: 'altcha', on: [] } } })
  assert.equal((await pub.getCaptchaChallenge()).parameters.algorithm, 'PBKDF2/SHA-256')
  await admin.updateTenant({ body: { captcha: null } })

  // The permission catalogue (CONTRACT §17), and the admin's: every one.
  const catalogue = await admin.listPermissions()
  assert.ok(catalogue.items.some((p) => p.name === 'users:write'))
  assert.equal((await admin.getMe()).permissions.length, catalogue.items.length)
  // The user's own language (CONTRACT §20), set and cleared.
  assert.equal((await admin.updateMe({ body: { locale: 'de' } })).locale, 'de')
  assert.equal((await admin.updateMe({ body: { locale: null } })).locale, null)
  const { role } = await admin.createRole({
    body: { name: 'Auditor', permissions: ['audit:read'] },
  })
  assert.equal((await admin.getRole({ path: { id: role.id } })).role.name, 'Auditor')
  const renamedRole = await admin.updateRole({ path: { id: role.id }, body: { name: 'Auditors' } })
  assert.equal(renamedRole.role.name, 'Auditors')
  assert.ok((await admin.listRoles()).items.some((r) => r.id === role.id))
  const withRoles = await admin.setUserRoles({
    path: { userId: created.user.id },
    body: { roles: ['Auditors'] },
  })
  assert.deepEqual(withRoles.roles, ['Auditors'])
  assert.deepEqual(await admin.deleteRole({ path: { id: role.id } }), { ok: true })

  // The tenant as its admin sees it, then passwordless and optional MFA turned on.
  assert.equal((await admin.getTenant()).slug, slug)
  const updated = await admin.updateTenant({
    body: { authPolicy: 'PasswordAndPasswordless', mfaPolicy: 'Optional' },
  })
  assert.equal(updated.authPolicy, 'PasswordAndPasswordless')
  assert.equal(updated.mfaPolicy, 'Optional')
  // What Required would do, before saving it: changes nothing (CONTRACT §21).
  const dry = await admin.dryRunPolicy({ body: { mfaPolicy: 'Required', sinceDays: 7 } })
  assert.deepEqual(dry, { signIns: 0, users: 0, affected: [] }, 'no sign-in yet')
  assert.equal((await admin.getTenant()).mfaPolicy, 'Optional')

  // A member: sign-up, login, refresh, me, password change.
  const email = uniqueEmail('member')
  const signedUp = await pub.signup({ body: { email, password: STRONG_PASSWORD } })
  assert.ok('user' in signedUp, 'a session: the workspace does not require a verified address')
  assert.equal(signedUp.user.email, email)
  const loggedIn = await pub.login({ body: { email, password: STRONG_PASSWORD } })
  assert.equal(loggedIn.user.id, signedUp.user.id)
  const refreshed = await pub.refreshSession({ body: { refreshToken: loggedIn.refreshToken } })
  assert.notEqual(refreshed.refreshToken, loggedIn.refreshToken)
  const me = await pub.getMe({ token: refreshed.accessToken })
  assert.equal(me.id, signedUp.user.id)
  const newPassword = 'amber-meadow-violin-42'
  assert.deepEqual(
    await pub.changePassword({
      token: refreshed.accessToken,
      body: { currentPassword: STRONG_PASSWORD, newPassword },
    }),
    { ok: true },
  )

  // The sessions the member sees: the current one marked; another one ended.
  const mine = await pub.listMySessions({ token: refreshed.accessToken, query: { limit: 50 } })
  // (The password change ended the others.)
  assert.deepEqual(
    mine.items.map((s) => s.current),
    [true],
  )
  const spareSession = await pub.login({ body: { email, password: newPassword } })
  const listed = await pub.listMySessions({ token: refreshed.accessToken })
  const spareId = listed.items.find((s) => !s.current)?.id as string
  assert.deepEqual(
    await pub.endMySession({ token: refreshed.accessToken, path: { id: spareId } }),
    { ok: true },
  )
  await assert.rejects(pub.refreshSession({ body: { refreshToken: spareSession.refreshToken } }), {
    status: 401,
  })

  // Passwordless: a login code from the mail (the alerts of the password change and the
  // new device land first).
  await server.deps.mailer.drain()
  let mails = sink.to(email).length
  assert.deepEqual(await pub.requestLoginCode({ body: { email } }), { ok: true })
  const loginCode = await mailedCode(email, mails)
  const byCode = await pub.verifyLoginCode({ body: { email, code: loginCode } })
  assert.equal(byCode.user.id, signedUp.user.id)

  // Email verification while signed in, then a password reset, by mailed codes.
  const verifier = uniqueEmail('verifier')
  const unverified = await pub.signup({ body: { email: verifier, password: STRONG_PASSWORD } })
  assert.ok('user' in unverified)
  assert.equal(unverified.user.emailVerified, false)
  mails = sink.to(verifier).length
  const asked = await pub.requestEmailVerification({ token: unverified.accessToken, body: {} })
  assert.deepEqual(asked, { ok: true })
  const verifyCode = await mailedCode(verifier, mails)
  const proven = await pub.verifyEmail({
    token: unverified.accessToken,
    body: { code: verifyCode },
  })
  assert.ok('tenant' in proven, 'with a token: the user as GET /me answers it')
  assert.equal(proven.emailVerified, true)
  mails = sink.to(verifier).length
  assert.deepEqual(await pub.requestPasswordReset({ body: { email: verifier } }), { ok: true })
  const resetCode = await mailedCode(verifier, mails)
  const afterReset = await pub.resetPassword({
    body: { email: verifier, code: resetCode, newPassword: 'copper-lagoon-thimble-19' },
  })
  assert.equal(afterReset.user.id, unverified.user.id)

  // TOTP enrolment while signed in.
  const enrolled = await pub.enrollTotp({ token: byCode.accessToken })
  assert.match(enrolled.otpauthUri, /^otpauth:\/\/totp\//)
  const verified = await pub.verifyTotp({
    token: byCode.accessToken,
    body: { code: totpAt(server, enrolled.secret) },
  })
  assert.equal(verified.ok, true)
  assert.equal(verified.recoveryCodes.length, 10)
  server.clock.advance(30)
  const regenerated = await pub.regenerateRecoveryCodes({
    token: byCode.accessToken,
    body: { totpCode: totpAt(server, enrolled.secret) },
  })
  assert.equal(regenerated.recoveryCodes.length, 10)
  server.clock.advance(30)

  // Passkeys: one made by a software authenticator, signed in with (no second factor
  // asked, though TOTP is on), listed and removed.
  const authenticator = new SoftAuthenticator()
  const creation = await pub.passkeyRegistrationOptions({ token: byCode.accessToken })
  const passkey = await pub.registerPasskey({
    token: byCode.accessToken,
    body: { response: authenticator.create(creation), name: 'SDK' },
  })
  assert.equal(passkey.name, 'SDK')
  const request = await pub.passkeySignInOptions({ body: { email } })
  const byPasskey = await pub.passkeySignIn({ body: { response: authenticator.get(request) } })
  assert.equal(byPasskey.user.id, signedUp.user.id)
  const held = await pub.listPasskeys({ token: byPasskey.accessToken })
  assert.deepEqual(
    held.items.map((p) => p.id),
    [passkey.id],
  )
  // Reauthenticating with it (CONTRACT §16: removing a passkey needs a recent proof).
  const again = await pub.reauthenticationOptions({ token: byPasskey.accessToken })
  assert.deepEqual(
    again.allowCredentials.map((c) => c.id),
    [authenticator.id],
  )
  const reauthenticated = await pub.reauthenticate({
    token: byPasskey.accessToken,
    body: { response: authenticator.get(again) },
  })
  assert.deepEqual(reauthenticated, { ok: true })
  const removed = await pub.deletePasskey({
    token: byPasskey.accessToken,
    path: { id: passkey.id },
  })
  assert.deepEqual(removed, { ok: true })

  // Email OTP as the second factor of a password login.
  await server.deps.mailer.drain()
  mails = sink.to(email).length
  const otpAsked = await pub.requestEmailOtp({ body: { email, password: newPassword } })
  assert.deepEqual(otpAsked, { ok: true })
  const emailOtpCode = await mailedCode(email, mails)
  const withOtp = await pub.login({ body: { email, password: newPassword, emailOtpCode } })
  assert.equal(withOtp.user.id, signedUp.user.id)

  // API keys: the admin's, with its access token (keys cannot manage keys).
  const key = await admin.createApiKey({ body: { name: 'backend', environment: 'test' } })
  assert.match(key.plaintext, /^ak_test_/)
  const spare = await admin.createApiKey({ body: { name: 'spare', environment: 'live' } })
  const keys = await admin.listApiKeys()
  assert.deepEqual(keys.items.map((k) => k.id).sort(), [key.apiKey.id, spare.apiKey.id].sort())
  assert.deepEqual(await admin.revokeApiKey({ path: { id: spare.apiKey.id } }), { ok: true })

  // The back end's admin client, with the API key.
  const backend = tracked(
    createAdminClient({ baseUrl: server.url, tenant: slug, apiKey: key.plaintext }),
  )
  const users = await backend.listUsers({ query: { limit: 50 } })
  assert.ok(users.items.some((u) => u.id === signedUp.user.id))
  // A group the directory provisioned through SCIM (not an SDK operation), and its roles.
  const scim = await fetch(`${server.url}/scim/v2/${slug}/Groups`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.plaintext}`, 'content-type': 'application/scim+json' },
    body: JSON.stringify({ displayName: 'Support', members: [{ value: signedUp.user.id }] }),
  })
  assert.equal(scim.status, 201)
  const groupId = ((await scim.json()) as { id: string }).id
  const { role: groupRole } = await admin.createRole({ body: { name: 'Helpdesk' } })
  const withGroupRoles = await backend.setGroupRoles({
    path: { id: groupId },
    body: { roles: [groupRole.name] },
  })
  assert.deepEqual(withGroupRoles.group.roles, ['Helpdesk'])
  const groups = await backend.listGroups({ query: { limit: 50 } })
  assert.deepEqual(
    groups.items.map((g) => [g.displayName, g.roles, g.memberCount]),
    [['Support', ['Helpdesk'], 1]],
  )
  // An organization (CONTRACT §18), a member with an organization role, the member's list.
  const { role: orgRole } = await admin.createRole({
    body: { name: 'Billing', kind: 'organization' },
  })
  const { organization } = await backend.createOrganization({ body: { name: 'Acme' } })
  const member = await backend.setOrganizationMember({
    path: { id: organization.id, userId: signedUp.user.id },
    body: { roles: [orgRole.name] },
  })
  assert.deepEqual(member.member.roles, ['Billing'])
  const myOrgs = await pub.listMyOrganizations({ token: withOtp.accessToken })
  assert.deepEqual(myOrgs.items, [{ id: organization.id, name: 'Acme', roles: ['Billing'] }])
  const seen = await pub.getOrganization({
    path: { id: organization.id },
    token: withOtp.accessToken,
  })
  assert.equal(seen.organization.memberCount, 1)
  const orgMembers = await backend.listOrganizationMembers({ path: { id: organization.id } })
  assert.deepEqual(
    orgMembers.items.map((m) => m.userId),
    [signedUp.user.id],
  )
  const renamedOrg = await backend.updateOrganization({
    path: { id: organization.id },
    body: { name: 'Acme Corp' },
  })
  assert.equal(renamedOrg.organization.name, 'Acme Corp')
  assert.equal((await backend.listOrganizations()).items.length, 1)
  // An invitation to it: one revoked, one accepted by the member, signed in.
  const spareInvitation = await backend.createOrganizationInvitation({
    path: { id: organization.id },
    body: { email: uniqueEmail('spare'), sendEmail: false },
  })
  assert.deepEqual(
    await backend.revokeOrganizationInvitation({
      path: { id: organization.id, invitationId: spareInvitation.invitation.id },
    }),
    { ok: true },
  )
  const orgInvitation = await backend.createOrganizationInvitation({
    path: { id: organization.id },
    body: { email, roles: [orgRole.name], sendEmail: false },
  })
  const joined = await pub.acceptOrganizationInvitation({
    body: { token: orgInvitation.token },
    token: withOtp.accessToken,
  })
  assert.deepEqual(joined.membership.roles, ['Billing'])
  const orgInvitations = await backend.listOrganizationInvitations({
    path: { id: organization.id },
  })
  assert.deepEqual(orgInvitations.items.map((i) => i.status).sort(), ['Accepted', 'Revoked'])
  assert.deepEqual(
    await backend.removeOrganizationMember({
      path: { id: organization.id, userId: signedUp.user.id },
    }),
    { ok: true },
  )
  assert.deepEqual(await backend.deleteOrganization({ path: { id: organization.id } }), {
    ok: true,
  })
  const introspected = await backend.introspectToken({ body: { token: withOtp.accessToken } })
  assert.equal(introspected.active, true)
  // The member's sessions as the back end sees them; the email-OTP one ended.
  const theirs = await backend.listUserSessions({ path: { userId: signedUp.user.id } })
  assert.ok(theirs.items.every((s) => !s.current))
  const otpSession = JSON.parse(atob(withOtp.accessToken.split('.')[1])).sid as string
  assert.ok(theirs.items.some((s) => s.id === otpSession))
  assert.deepEqual(
    await backend.endUserSession({ path: { userId: signedUp.user.id, id: otpSession } }),
    { ok: true },
  )
  // Resetting TOTP and suspending end the member's sessions.
  const reset = await backend.disableUserTotp({ path: { userId: signedUp.user.id } })
  assert.deepEqual(reset, { ok: true })
  // Ending a sign-in failure lock (CONTRACT §21), with the key: none holds, so nothing ends.
  const unlocked = await backend.unlockUser({ path: { userId: signedUp.user.id } })
  assert.equal(unlocked.lockedUntil, null)
  // Impersonation (CONTRACT §22) is a person's act: the admin's own token.
  const impersonated = await admin.impersonateUser({
    path: { userId: signedUp.user.id },
    body: { reason: 'SDK test' },
  })
  assert.equal(impersonated.user.id, signedUp.user.id)
  assert.equal(JSON.parse(atob(impersonated.accessToken.split('.')[1])).act.sub, created.user.id)
  // A key cannot grant Admin (CONTRACT §4): a status change it may make.
  const suspended = await backend.updateUser({
    path: { userId: signedUp.user.id },
    body: { status: 'Suspended' },
  })
  assert.equal(suspended.status, 'Suspended')
  const restored = await backend.updateUser({
    path: { userId: signedUp.user.id },
    body: { status: 'Active' },
  })
  assert.equal(restored.status, 'Active')
  // Import (CONTRACT §14): an existing address is skipped, a new one created.
  const imported = await backend.importUsers({
    body: { users: [{ email: signedUp.user.email }, { email: 'imported-sdk@example.com' }] },
  })
  assert.deepEqual(
    imported.results.map((r) => r.status),
    ['skipped', 'created'],
  )
  const renamed = await backend.updateTenant({ body: { name: 'SDK Tenant, renamed' } })
  assert.equal(renamed.name, 'SDK Tenant, renamed')
  assert.equal((await backend.getTenant()).name, 'SDK Tenant, renamed')

  // The logo: stored with the key, read by anyone, removed.
  const image = png()
  const storedLogo = await backend.setTenantLogo({
    body: { mimeType: 'image/png', data: image.toString('base64') },
  })
  assert.equal(storedLogo.mimeType, 'image/png')
  const logo = await pub.getTenantLogo()
  assert.ok(logo instanceof Blob)
  assert.equal(logo.type, 'image/png')
  assert.deepEqual(Buffer.from(await logo.arrayBuffer()), image)
  assert.deepEqual(await backend.deleteTenantLogo(), { ok: true })

  // The OpenID provider's API resources and applications (CONTRACT §11), with the key.
  const identifier = 'https://reports.example.com'
  const { apiResource } = await backend.createApiResource({
    body: { name: 'Reports', identifier, scopes: [{ name: 'reports:read' }] },
  })
  assert.deepEqual(apiResource.scopes[0].roles, ['Member', 'Admin'])
  const resources = await backend.listApiResources({ query: { limit: 50 } })
  assert.deepEqual(
    resources.items.map((r) => r.id),
    [apiResource.id],
  )
  const readResource = await backend.getApiResource({ path: { id: apiResource.id } })
  assert.equal(readResource.apiResource.identifier, identifier)
  const longer = await backend.updateApiResource({
    path: { id: apiResource.id },
    body: { accessTokenTtlSeconds: 600 },
  })
  assert.equal(longer.apiResource.accessTokenTtlSeconds, 600)
  const made = await backend.createApplication({
    body: { name: 'Nightly job', type: 'machine', allowedScopes: ['reports:read'] },
  })
  assert.equal(typeof made.clientSecret, 'string')
  const appId = made.application.id
  const apps = await backend.listApplications({ query: { limit: 50 } })
  assert.deepEqual(
    apps.items.map((a) => a.clientId),
    [made.application.clientId],
  )
  assert.equal((await backend.getApplication({ path: { id: appId } })).application.type, 'machine')
  const renamedApp = await backend.updateApplication({
    path: { id: appId },
    body: { name: 'Nightly export' },
  })
  assert.equal(renamedApp.application.name, 'Nightly export')
  const rotated = await backend.rotateApplicationSecret({ path: { id: appId } })
  assert.notEqual(rotated.clientSecret, made.clientSecret)
  assert.deepEqual(await backend.deleteApplication({ path: { id: appId } }), { ok: true })
  assert.deepEqual(await backend.deleteApiResource({ path: { id: apiResource.id } }), { ok: true })

  // Webhooks (CONTRACT §13), with the key: nothing is delivered (the worker is off here).
  const hook = await backend.createWebhook({
    body: { url: 'https://hooks.example.com/in', events: ['UserSignup'] },
  })
  assert.match(hook.secret, /^whsec_/)
  const hookId = hook.webhook.id
  const hooks = await backend.listWebhooks({ query: { limit: 50 } })
  assert.deepEqual(
    hooks.items.map((w) => w.id),
    [hookId],
  )
  assert.equal((await backend.getWebhook({ path: { id: hookId } })).webhook.enabled, true)
  const pausedHook = await backend.updateWebhook({ path: { id: hookId }, body: { enabled: false } })
  assert.equal(pausedHook.webhook.enabled, false)
  const newHookSecret = await backend.rotateWebhookSecret({ path: { id: hookId } })
  assert.notEqual(newHookSecret.secret, hook.secret)
  const { delivery } = await backend.testWebhook({ path: { id: hookId } })
  assert.equal(delivery.eventType, 'WebhookTest')
  const hookDeliveries = await backend.listWebhookDeliveries({
    path: { id: hookId },
    query: { limit: 50 },
  })
  assert.deepEqual(
    hookDeliveries.items.map((d) => d.id),
    [delivery.id],
  )
  const retriedDelivery = await backend.retryWebhookDelivery({
    path: { id: hookId, deliveryId: delivery.id },
  })
  assert.equal(retriedDelivery.delivery.id, delivery.id)
  assert.deepEqual(await backend.deleteWebhook({ path: { id: hookId } }), { ok: true })

  // Blocking hooks (CONTRACT §21), disabled so that no sign-in below calls one.
  const blocking = await backend.createHook({
    body: { event: 'before_sign_up', url: 'https://hooks.example.com/sign-up', enabled: false },
  })
  assert.match(blocking.secret, /^whsec_/)
  const blockingId = blocking.hook.id
  assert.deepEqual(
    (await backend.listHooks({ query: { limit: 50 } })).items.map((h) => h.id),
    [blockingId],
  )
  assert.equal((await backend.getHook({ path: { id: blockingId } })).hook.enabled, false)
  const slower = await backend.updateHook({
    path: { id: blockingId },
    body: { timeoutMs: 500, url: 'https://127.0.0.1:9/sign-up' },
  })
  assert.equal(slower.hook.timeoutMs, 500)
  // A test call to an internal address: the egress guard refuses it, and it is listed.
  const tried = await backend.testHook({ path: { id: blockingId } })
  assert.equal(tried.outcome, 'error')
  assert.match(tried.error ?? '', /^refused: /)
  const hookCalls = await backend.listHookCalls({ path: { id: blockingId } })
  assert.deepEqual(
    hookCalls.items.map((c) => [c.outcome, c.test]),
    [['error', true]],
  )
  assert.deepEqual(await backend.deleteHook({ path: { id: blockingId } }), { ok: true })

  // Mail templates (CONTRACT §20): saved, listed, previewed (draft, saved, default), reset.
  const mailPath = { kind: 'login_code', locale: 'de' } as const
  const saved = await backend.putEmailTemplate({
    path: mailPath,
    body: { subject: 'Code für {{tenant.name}}', text: 'Ihr Code: {{code}}' },
  })
  assert.equal(saved.template.kind, 'login_code')
  const templates = await backend.listEmailTemplates({})
  assert.deepEqual(
    templates.items.map((x) => `${x.kind}/${x.locale}`),
    ['login_code/de'],
  )
  assert.ok(templates.kinds.some((k) => k.kind === 'login_code' && k.required.includes('code')))
  const draft = await backend.previewEmailTemplate({
    path: mailPath,
    body: { subject: 'Entwurf', text: 'Code {{code}}' },
  })
  assert.equal(draft.subject, 'Entwurf')
  assert.match(
    (await backend.previewEmailTemplate({ path: mailPath, body: {} })).text,
    /^Ihr Code: \d{6}$/,
  )
  assert.deepEqual(await backend.deleteEmailTemplate({ path: mailPath }), { ok: true })
  const byDefault = await backend.previewEmailTemplate({ path: mailPath, body: {} })
  assert.ok(!byDefault.subject.startsWith('Code für'), 'the default again')

  // SSO connections (CONTRACT §12): made by the admin (a key cannot set what a connection
  // trusts), then read, listed, enforced and deleted with the key.
  const sso = await admin.createSsoConnection({
    body: {
      name: 'Okta',
      type: 'oidc',
      domains: ['Corp.Example.COM'],
      oidc: { issuer: 'https://corp.okta.example.com', clientId: 'c', clientSecret: 's' },
    },
  })
  assert.deepEqual(sso.connection.domains, ['corp.example.com'])
  const ssoId = sso.connection.id
  const ssoList = await backend.listSsoConnections({ query: { limit: 50 } })
  assert.deepEqual(
    ssoList.items.map((c) => c.id),
    [ssoId],
  )
  assert.equal((await backend.getSsoConnection({ path: { id: ssoId } })).connection.enforce, false)
  const enforced = await backend.updateSsoConnection({
    path: { id: ssoId },
    body: { enforce: true },
  })
  assert.equal(enforced.connection.enforce, true)
  assert.deepEqual(await backend.deleteSsoConnection({ path: { id: ssoId } }), { ok: true })

  // Social connections (CONTRACT §19): made by the admin, then read, listed, reordered and
  // deleted with the key; the signed-in admin's own identities (none linked: a 404 to remove).
  const social = await admin.createSocialConnection({
    body: { provider: 'github', clientId: 'gh-client', clientSecret: 'gh-secret' },
  })
  const socialId = social.connection.id
  assert.equal(social.connection.hasClientSecret, true)
  assert.deepEqual(
    (await backend.listSocialConnections({ query: { limit: 50 } })).items.map((c) => c.id),
    [socialId],
  )
  assert.equal(
    (await backend.getSocialConnection({ path: { id: socialId } })).connection.name,
    'GitHub',
  )
  const reordered = await backend.updateSocialConnection({
    path: { id: socialId },
    body: { order: 3 },
  })
  assert.equal(reordered.connection.order, 3)
  assert.deepEqual(await backend.deleteSocialConnection({ path: { id: socialId } }), { ok: true })
  assert.deepEqual(await admin.listMyIdentities(), { items: [] })
  await assert.rejects(
    admin.removeMyIdentity({ path: { id: '00000000-0000-4000-8000-000000000000' } }),
    { status: 404 },
  )

  // The admin's connected applications: a web app granted through the hosted pages.
  const redirectUri = 'https://app.example.com/callback'
  const webApp = await backend.createApplication({
    body: { name: 'Team Notes', type: 'web', redirectUris: [redirectUri] },
  })
  const pages = new PageClient(server)
  await pages.get(`/t/${slug}/sign-in`)
  await pages.post(`/t/${slug}/sign-in`, { email: adminEmail, password: STRONG_PASSWORD })
  const clientId = webApp.application.clientId
  await grantThroughPages(server, slug, pages, {
    clientId,
    clientSecret: String(webApp.clientSecret),
    redirectUri,
  })
  const connected = await admin.listMyApplications()
  assert.deepEqual(
    connected.items.map((a) => [a.clientId, a.name]),
    [[clientId, 'Team Notes']],
  )
  assert.deepEqual(await admin.revokeMyApplication({ path: { clientId } }), { ok: true })
  assert.deepEqual((await admin.listMyApplications()).items, [])
  await assert.rejects(pub.getTenantLogo(), (e: unknown) => {
    assert.ok(e instanceof AuthServiceError)
    assert.equal(e.status, 404)
    assert.equal(e.reason, 'not_found') // no logo any more, not route_not_found
    return true
  })

  // Invitations: one revoked, one accepted with the token the service answered.
  const inviteeEmail = uniqueEmail('invitee')
  const invited = await backend.createInvite({ body: { email: inviteeEmail, role: 'Member' } })
  assert.equal(invited.invite.email, inviteeEmail)
  const other = await backend.createInvite({ body: { email: uniqueEmail('other') } })
  const invites = await backend.listInvites()
  assert.ok(invites.items.some((i) => i.id === invited.invite.id))
  assert.deepEqual(await backend.revokeInvite({ path: { id: other.invite.id } }), { ok: true })
  const accepted = await pub.acceptInvite({
    body: { token: invited.token, password: STRONG_PASSWORD },
  })
  assert.equal(accepted.user.email, inviteeEmail)

  // A user deleted by the back end.
  const doomed = await pub.signup({
    body: { email: uniqueEmail('doomed'), password: STRONG_PASSWORD },
  })
  assert.ok('user' in doomed)
  assert.deepEqual(await backend.deleteUser({ path: { userId: doomed.user.id } }), { ok: true })
  // Personal data: the member's export, and a user erased by the back end.
  const exported = await pub.exportPersonalData({ token: accepted.accessToken })
  assert.equal(exported.user.id, accepted.user.id)
  assert.ok(exported.auditEvents.some((e) => e.action === 'InviteAccepted'))
  const forgotten = await pub.signup({
    body: { email: uniqueEmail('forgotten'), password: STRONG_PASSWORD },
  })
  assert.ok('user' in forgotten)
  assert.deepEqual(await backend.eraseUser({ path: { userId: forgotten.user.id } }), { ok: true })

  // Hosted sign-in with the OpenID provider: credentials, start, the browser's round trip,
  // the callback, and the credentials removed.
  const idpClient = await idp.addClient(redirectUriOf(server, slug))
  const stored = await admin.setIdpCredentials({ body: idpClient })
  assert.deepEqual(stored, { ok: true })
  const start = await pub.startIdpSignIn()
  const back = await idp.authorize(start.authorizationUrl, newAccount())
  const viaIdp = await pub.finishIdpSignIn({ query: Object.fromEntries(back.searchParams) })
  assert.equal(typeof viaIdp.accessToken, 'string')
  // That account has no password: it sets a first one (its sign-in is the recent proof).
  assert.equal((await pub.getMe({ token: viaIdp.accessToken })).hasPassword, false)
  assert.deepEqual(
    await pub.setPassword({
      token: viaIdp.accessToken,
      body: { newPassword: 'saffron-lattice-beacon-53' },
    }),
    { ok: true },
  )
  assert.deepEqual(await admin.deleteIdpCredentials(), { ok: true })

  // A session to end at the end (signed in before MFA becomes required).
  const last = await pub.login({ body: { email, password: newPassword } })

  // TOTP enrolment before the first sign-in, under a Required MFA policy.
  const newcomer = uniqueEmail('newcomer')
  await pub.signup({ body: { email: newcomer, password: STRONG_PASSWORD } })
  await admin.updateTenant({ body: { mfaPolicy: 'Required' } })
  const begun = await pub.initialEnrollTotp({
    body: { email: newcomer, password: STRONG_PASSWORD },
  })
  assert.match(begun.otpauthUri, /^otpauth:\/\/totp\//)
  const done = await pub.initialVerifyTotp({
    body: { email: newcomer, password: STRONG_PASSWORD, code: totpAt(server, begun.secret) },
  })
  assert.equal(done.user.totpEnrolled, true)
  assert.equal(done.recoveryCodes.length, 10)

  // The audit trail.
  const audit = await backend.listAuditEvents({ query: { limit: 100 } })
  assert.ok(audit.items.length > 0)
  const ndjson = await backend.exportAuditEvents({ query: { since: audit.items[0].createdAt } })
  assert.ok(ndjson instanceof Blob)
  assert.equal(ndjson.type, 'application/x-ndjson')
  const lines = (await ndjson.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  assert.ok(lines.some((l) => l.id === audit.items[0].id))

  // Sessions ended, then the account itself.
  assert.deepEqual(await pub.logout({ body: { refreshToken: last.refreshToken } }), { ok: true })
  await assert.rejects(pub.refreshSession({ body: { refreshToken: last.refreshToken } }), {
    status: 401,
  })
  const devicesForgotten = await pub.forgetRememberedDevices({ token: accepted.accessToken })
  assert.deepEqual(devicesForgotten, { ok: true, count: 0 })
  const ended = await pub.logoutAll({ token: accepted.accessToken })
  assert.equal(ended.ok, true)
  assert.ok(ended.count >= 1)
  const gone = await pub.deleteMe({ token: done.accessToken })
  assert.deepEqual(gone, { ok: true })
  await assert.rejects(pub.getMe({ token: done.accessToken }), { status: 401 })

  // The workspace closed by its admin, for good.
  assert.deepEqual(
    await admin.deleteTenant({ body: { confirmSlug: slug, password: STRONG_PASSWORD } }),
    { ok: true },
  )
  await assert.rejects(pub.getAuthConfig(), { status: 404 })

  const all = Object.keys(OPERATIONS).sort()
  assert.deepEqual([...called].sort(), all, 'every operationId is called')
  console.log(
    `operations called: ${called.size} of ${all.length} in ${Math.round(performance.now() - started)} ms`,
  )
})
