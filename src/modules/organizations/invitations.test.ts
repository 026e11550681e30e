// Invitations to an organization (CONTRACT §18) over real HTTP: the mail names the
// organization; accepting as an existing user (its access token) and as a new address
// ({token, password}: the sign-up path); a wrong address, reuse, revocation and expiry
// refused, each changing nothing; one pending invitation per address; an invitation of
// organization A never makes a member of B, nor of another tenant's.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { receiver, verify } from '../../../test/fixtures/webhooks.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
let other: TenantFixture
let admin: string
before(async (ctx) => {
  sink = await new SmtpSink().start()
  // Hooks on loopback (the invitation's sign-up hook test).
  server = await startTestServer(ctx, { smtpUrl: sink.url, webhookAllowPrivate: true })
  t = await createTenant(server, { name: 'Rocket Works' })
  other = await createTenant(server)
  admin = t.admin.accessToken
})
after(async () => {
  await sink.stop()
})

let n = 0
const fresh = (prefix: string) => `${prefix} ${++n} ${Math.random().toString(36).slice(2, 6)}`
const call = (method: string, path: string, body: unknown, token?: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, token ? { token } : {})
const accept = (body: unknown, token?: string, slug = t.slug) =>
  call('POST', 'organization-invitations/accept', body, token, slug)

async function orgRole() {
  const res = await call('POST', 'roles', { name: fresh('OrgRole'), kind: 'organization' }, admin)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.role as { id: string; name: string }
}

async function organization(name = fresh('Org'), tenant = t) {
  const res = await call('POST', 'organizations', { name }, tenant.admin.accessToken, tenant.slug)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.organization as { id: string; name: string }
}

async function invite(orgId: string, body: Record<string, unknown>) {
  const res = await call(
    'POST',
    `organizations/${orgId}/invitations`,
    { sendEmail: false, ...body },
    admin,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { token: string; invitation: { id: string; status: string; roles: string[] } }
}

const membersOf = async (orgId: string) =>
  (await call('GET', `organizations/${orgId}/members`, undefined, admin)).body.items.map(
    (m: { userId: string; roles: string[] }) => [m.userId, m.roles],
  )

test('the invitation mail names the organization; an existing user accepts with its access token', async () => {
  const role = await orgRole()
  const org = await organization('Launch Pad Ltd')
  const user = await signup(server, t.slug)
  const mark = await auditMark(server, t.tenantId)
  const made = await call(
    'POST',
    `organizations/${org.id}/invitations`,
    { email: user.email.toUpperCase(), roles: [role.name] },
    admin,
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  assert.deepEqual(Object.keys(made.body).sort(), ['invitation', 'token'])
  const { invitation, token } = made.body
  assert.equal(invitation.status, 'Pending')
  assert.deepEqual(invitation.roles, [role.name])
  const mail = await sink.waitFor(user.email)
  assert.match(mail.subject, /Launch Pad Ltd/)
  assert.match(mail.text, /Launch Pad Ltd/)
  assert.ok(mail.text.includes(token))
  assert.ok(mail.text.includes(`/t/${t.slug}/organization-invite?token=`))

  const accepted = await accept({ token }, user.accessToken)
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
  assert.deepEqual(accepted.body, {
    membership: { id: org.id, name: 'Launch Pad Ltd', roles: [role.name] },
    session: null,
    verificationRequired: false,
  })
  assert.deepEqual(await membersOf(org.id), [[user.user.id, [role.name]]])
  const events = await auditSince(server, t.tenantId, mark)
  assert.deepEqual(
    events.map((e) => [e.action, e.metadata]),
    [
      [
        'OrganizationInvitationAccepted',
        { organizationId: org.id, invitationId: invitation.id, newUser: false },
      ],
      [
        'OrganizationInvitationCreated',
        {
          organizationId: org.id,
          invitationId: invitation.id,
          roles: [role.name],
          emailSent: true,
        },
      ],
      ['OrganizationMemberAdded', { organizationId: org.id, roles: [role.name], via: 'invite' }],
    ],
  )
  // Reuse: 400 invalid_invite, nothing changes.
  await unchanged(server, t.tenantId, async () => {
    expectError(await accept({ token }, user.accessToken), 400, 'invalid_invite')
  })
  const listed = await call('GET', `organizations/${org.id}/invitations`, undefined, admin)
  assert.equal(listed.body.items[0].status, 'Accepted')
})

test('a new address accepts with a password: it signs up and joins', async () => {
  const org = await organization()
  const email = uniqueEmail('newcomer')
  const { token } = await invite(org.id, { email })
  const res = await accept({ token, password: STRONG_PASSWORD })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.membership.id, org.id)
  assert.equal(res.body.verificationRequired, false)
  const session = res.body.session
  assert.equal(session.user.email, email)
  const mine = await call('GET', 'me/organizations', undefined, session.accessToken)
  assert.deepEqual(
    mine.body.items.map((m: { id: string }) => m.id),
    [org.id],
  )
  // The sign-up path's own rules apply: a weak password is refused and spends nothing.
  const second = await invite(org.id, { email: uniqueEmail('weak') })
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await accept({ token: second.token, password: 'password1234' }),
      400,
      'password_too_weak',
    )
  })
  // An address that has an account must sign in to accept.
  const existing = await signup(server, t.slug)
  const third = await invite(org.id, { email: existing.email })
  await unchanged(server, t.tenantId, async () => {
    expectError(await accept({ token: third.token, password: STRONG_PASSWORD }), 400, 'email_taken')
  })
})

test('refused: a wrong address, a revoked, replaced or expired token, bad input; nothing changes', async () => {
  const org = await organization()
  const invitee = await signup(server, t.slug)
  const someoneElse = await signup(server, t.slug)
  const { token, invitation } = await invite(org.id, { email: invitee.email })
  // The same address has an account in another tenant too.
  const stranger = await signup(server, other.slug, invitee.email)
  await unchanged(server, [t.tenantId, other.tenantId], async () => {
    expectError(await accept({ token }, someoneElse.accessToken), 403, 'invite_email_mismatch')
    expectError(await accept({ token: 'x'.repeat(43) }, invitee.accessToken), 400, 'invalid_invite')
    expectValidation(
      await accept({ token, password: STRONG_PASSWORD }, invitee.accessToken),
      'body.password',
    )
    expectValidation(await accept({ token }), 'body.password')
    expectValidation(await accept({}, invitee.accessToken), 'body.token')
    // The token is this tenant's: another tenant knows no such invitation.
    expectError(await accept({ token }, stranger.accessToken, other.slug), 400, 'invalid_invite')
  })
  await unchanged(server, t.tenantId, async () => {
    expectError(await accept({ token }, someoneElse.accessToken), 403, 'invite_email_mismatch')
    expectValidation(
      await call(
        'POST',
        `organizations/${org.id}/invitations`,
        { email: invitee.email, roles: ['nope'] },
        admin,
      ),
      'body.roles.0',
    )
    expectValidation(
      await call('POST', `organizations/${org.id}/invitations`, { email: 'not-an-address' }, admin),
      'body.email',
    )
    expectError(
      await call(
        'POST',
        `organizations/${crypto.randomUUID()}/invitations`,
        { email: invitee.email },
        admin,
      ),
      404,
      'not_found',
    )
    expectError(
      await call(
        'POST',
        `organizations/${org.id}/invitations`,
        { email: invitee.email },
        invitee.accessToken,
      ),
      403,
      'admin_required',
    )
  })

  // A second invitation of the address replaces the first: one pending per address.
  const replacement = await invite(org.id, { email: invitee.email })
  const listed = await call('GET', `organizations/${org.id}/invitations`, undefined, admin)
  const states = Object.fromEntries(
    listed.body.items.map((i: { id: string; status: string }) => [i.id, i.status]),
  )
  assert.deepEqual(states, { [invitation.id]: 'Revoked', [replacement.invitation.id]: 'Pending' })
  await unchanged(server, t.tenantId, async () => {
    expectError(await accept({ token }, invitee.accessToken), 400, 'invalid_invite')
  })

  // Revoked by the admin: refused; revoking again is 400.
  const mark = await auditMark(server, t.tenantId)
  const revoked = await call(
    'DELETE',
    `organizations/${org.id}/invitations/${replacement.invitation.id}`,
    undefined,
    admin,
  )
  assert.deepEqual(revoked.body, { ok: true })
  assert.deepEqual(
    (await auditSince(server, t.tenantId, mark)).map((e) => [e.action, e.metadata]),
    [
      [
        'OrganizationInvitationRevoked',
        { organizationId: org.id, invitationId: replacement.invitation.id, reason: 'admin' },
      ],
    ],
  )
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await accept({ token: replacement.token }, invitee.accessToken),
      400,
      'invalid_invite',
    )
    expectError(
      await call(
        'DELETE',
        `organizations/${org.id}/invitations/${replacement.invitation.id}`,
        undefined,
        admin,
      ),
      400,
      'invalid_invite',
    )
    expectError(
      await call(
        'DELETE',
        `organizations/${org.id}/invitations/${crypto.randomUUID()}`,
        undefined,
        admin,
      ),
      404,
      'not_found',
    )
  })

  // Expired: refused.
  const late = await invite(org.id, { email: invitee.email, ttlSeconds: 60 })
  server.clock.advance(61)
  const fresh = await call('POST', 'auth/login', {
    email: invitee.email,
    password: STRONG_PASSWORD,
  })
  await unchanged(server, t.tenantId, async () => {
    expectError(await accept({ token: late.token }, fresh.body.accessToken), 400, 'invalid_invite')
  })
  assert.deepEqual(await membersOf(org.id), [])
})

test('an invitation to organization A makes a member of A only, and its list is A’s own', async () => {
  const a = await organization()
  const b = await organization()
  const user = await signup(server, t.slug)
  const { token, invitation } = await invite(a.id, { email: user.email })
  await invite(b.id, { email: uniqueEmail('b-only') })
  // B's invitations do not show A's; A's invitation cannot be revoked through B.
  const listB = await call('GET', `organizations/${b.id}/invitations`, undefined, admin)
  assert.ok(listB.body.items.every((i: { id: string }) => i.id !== invitation.id))
  await unchanged(server, t.tenantId, async () => {
    expectError(
      await call('DELETE', `organizations/${b.id}/invitations/${invitation.id}`, undefined, admin),
      404,
      'not_found',
    )
  })
  assert.equal((await accept({ token }, user.accessToken)).status, 200)
  assert.deepEqual(await membersOf(b.id), [])
  assert.deepEqual(
    (await membersOf(a.id)).map(([id]: [string]) => id),
    [user.user.id],
  )
})

test('an invitation’s sign-up tells the hooks method invite (CONTRACT §21), as the SPEC’s invitations do', async (ctx) => {
  const tenant = await createTenant(server)
  const sinkOfHook = await receiver(ctx, (_n, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ decision: 'allow' }))
  })
  const hook = await server.request(
    'POST',
    `/v1/${tenant.slug}/hooks`,
    { event: 'before_sign_up', url: sinkOfHook.url },
    { token: tenant.admin.accessToken },
  )
  assert.equal(hook.status, 200, JSON.stringify(hook.body))
  const org = await call(
    'POST',
    'organizations',
    { name: fresh('Org') },
    tenant.admin.accessToken,
    tenant.slug,
  )
  const made = await call(
    'POST',
    `organizations/${org.body.organization.id}/invitations`,
    { email: uniqueEmail('hooked'), sendEmail: false },
    tenant.admin.accessToken,
    tenant.slug,
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const res = await accept(
    { token: made.body.token, password: STRONG_PASSWORD },
    undefined,
    tenant.slug,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(sinkOfHook.received.length, 1)
  assert.equal(verify(hook.body.secret, sinkOfHook.received[0]).context.method, 'invite')
})
