// Accepting an invitation under an enforced SSO domain (CONTRACT §12, issue 36 P2): the
// invitee must go through the domain's connection, so the accept is 403 sso_required with
// nothing made (no user, no session, the invitation unspent); an invitation to the Admin
// role is excepted as §12 excepts Admins, and a domain whose connection does not enforce
// accepts as before.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { unchanged, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  randomIp,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
const stamp = Date.now().toString(36)
const enforced = `enforced-${stamp}.example.com`
const open = `open-${stamp}.example.com`
const PASSWORD = 'invited-Password-31'

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  for (const [name, domain, enforce] of [
    ['Enforced', enforced, true],
    ['Open', open, false],
  ] as const) {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/sso-connections`,
      {
        name,
        type: 'oidc',
        domains: [domain],
        enforce,
        oidc: { issuer: 'https://idp.example.com', clientId: 'abc', clientSecret: 'sekrit-value' },
      },
      { token: t.admin.accessToken },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
})

async function invite(email: string, role = 'Member') {
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email, role, sendEmail: false },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.token as string
}
const accept = (token: string) =>
  server.request('POST', '/v1/invites/accept', { token, password: PASSWORD }, { ip: randomIp() })

test('accepting an invitation under an enforced SSO domain is 403 sso_required: no user, no session, the invitation unspent', async () => {
  const email = `new.hire@${enforced}`
  const token = await invite(email)
  const res = await unchanged(server, t.tenantId, () => accept(token))
  expectError(res, 403, 'sso_required')
  assert.equal(res.body.accessToken, undefined)
  assert.equal(await userByEmail(server, t.tenantId, email), undefined)
  // Unspent: the same answer again, not invite_used.
  expectError(await accept(token), 403, 'sso_required')
  // No password session by the sign-in route either.
  expectError(
    await server.request('POST', `/v1/${t.slug}/auth/login`, { email, password: PASSWORD }),
    401,
    'invalid_credentials',
  )
})

test('an invitation to the Admin role under an enforced domain, and any under a domain that does not enforce, accept as before', async () => {
  for (const email of [`boss@${enforced}`, `someone@${open}`]) {
    const token = await invite(email, email.startsWith('boss') ? 'Admin' : 'Member')
    const res = await accept(token)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.ok(res.body.accessToken)
  }
})
