// JIT membership by verified email domain (CONTRACT §18) over real HTTP: a sign-in through
// an unverified address of a claimed domain makes no member; once the address is verified,
// the sign-in that follows (here the one verify-email itself is, then a password sign-in)
// makes the user a member with the organization's jit.roles, once; another domain, another
// organization or another tenant's claim of the same domain makes nothing.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { auditMark, auditSince } from '../../../test/db.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
let other: TenantFixture
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await createTenant(server)
  other = await createTenant(server)
})
after(async () => {
  await sink.stop()
})

const call = (method: string, path: string, body: unknown, token?: string, slug = t.slug) =>
  server.request(method, `/v1/${slug}/${path}`, body, token ? { token } : {})
const mine = async (token: string) =>
  (await call('GET', 'me/organizations', undefined, token)).body.items as {
    id: string
    roles: string[]
  }[]

test('JIT by domain only after the address is verified, with jit.roles, once', async () => {
  const domain = `jit-${Math.random().toString(36).slice(2, 8)}.example`
  const role = await call(
    'POST',
    'roles',
    { name: `Jit ${domain}`, kind: 'organization' },
    t.admin.accessToken,
  )
  assert.equal(role.status, 200, JSON.stringify(role.body))
  const org = await call(
    'POST',
    'organizations',
    { name: 'Jit Org', jit: { emailDomains: [domain], roles: [role.body.role.name] } },
    t.admin.accessToken,
  )
  assert.equal(org.status, 200, JSON.stringify(org.body))
  const orgId = org.body.organization.id
  // Another tenant claims the same domain for its own organization: no concern of this one.
  const theirs = await call(
    'POST',
    'organizations',
    { name: 'Theirs', jit: { emailDomains: [domain], roles: [] } },
    other.admin.accessToken,
    other.slug,
  )
  assert.equal(theirs.status, 200, JSON.stringify(theirs.body))

  // Signed up and signed in with the address unverified: no member.
  const email = `ada@${domain}`
  const user = await signup(server, t.slug, email)
  const login = await call('POST', 'auth/login', { email, password: STRONG_PASSWORD })
  assert.equal(login.status, 200, JSON.stringify(login.body))
  assert.deepEqual(await mine(login.body.accessToken), [])
  // A user of another domain never joins.
  const outsider = await signup(server, t.slug)
  assert.deepEqual(await mine(outsider.accessToken), [])

  // Verified: the sign-in that verify-email is makes the member, with the JIT roles.
  const before = sink.to(email).length
  const asked = await call('POST', 'auth/request-email-verification', { email })
  assert.equal(asked.status, 200, JSON.stringify(asked.body))
  const code = await sink.codeAfter(email, before)
  const mark = await auditMark(server, t.tenantId)
  const verified = await call('POST', 'auth/verify-email', { email, code })
  assert.equal(verified.status, 200, JSON.stringify(verified.body))
  const joined = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'OrganizationMemberAdded',
  )
  assert.deepEqual(
    joined.map((e) => [e.userId, e.metadata]),
    [[user.user.id, { organizationId: orgId, roles: [role.body.role.name], via: 'jit' }]],
  )
  assert.deepEqual(await mine(verified.body.accessToken), [
    { id: orgId, name: 'Jit Org', roles: [role.body.role.name] },
  ])
  // The next sign-ins leave the membership as it is (no second event), and the other
  // tenant's organization claiming the domain gained nobody.
  const mark2 = await auditMark(server, t.tenantId)
  const again = await call('POST', 'auth/login', { email, password: STRONG_PASSWORD })
  assert.equal(again.status, 200)
  assert.deepEqual(
    (await auditSince(server, t.tenantId, mark2)).filter(
      (e) => e.action === 'OrganizationMemberAdded',
    ),
    [],
  )
  const theirMembers = await call(
    'GET',
    `organizations/${theirs.body.organization.id}/members`,
    undefined,
    other.admin.accessToken,
    other.slug,
  )
  assert.deepEqual(theirMembers.body.items, [])
})
