// An SSO connection's roleMapping (CONTRACT §17) against a real OpenID provider: shown in
// the connection record by role name; at every SSO sign-in the roles that came from the
// mapping are replaced by those the current ID token's `groups` maps to, direct roles kept;
// UserRolesChanged via "sso" when they change. Refused, changing nothing: an unknown role,
// an API key, an escalation.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, test } from 'node:test'
import { auditRows, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { connectOidcIdp } from '../../../test/fixtures/sso-oidc.ts'
import {
  createTenant,
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

let server: TestServer
let idp: OidcProviderFixture
let t: TenantFixture
let connectionId: string
const hex = () => randomBytes(4).toString('hex')
const domain = `map-${hex()}.example.com`

const call = (method: string, path: string, body: unknown, token = t.admin.accessToken) =>
  server.request(method, `/v1/${t.slug}/${path}`, body, { token })

async function role(name: string, permissions: string[]) {
  const res = await call('POST', 'roles', { name, permissions })
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

before(async () => {
  idp = await startOidcProvider()
  server = await startServer({ webhookAllowPrivate: true })
  t = await createTenant(server)
  await role('Engineers', ['audit:read'])
  await role('Operators', ['users:read'])
  await role('Hooks', ['webhooks:write'])
  connectionId = await connectOidcIdp(server, t, idp, 'Directory', [domain], {
    roleMapping: [
      { claim: 'groups', value: 'eng', roles: ['engineers'] },
      { claim: 'groups', value: 'ops', roles: ['Operators', 'Hooks'] },
    ],
  })
})

after(async () => {
  await server?.close()
  await idp?.close()
})

async function ssoSignIn(who: IdpAccount) {
  const browser = new PageClient(server)
  await browser.get(`/t/${t.slug}/sign-in/sso`)
  const form = await browser.once('POST', `/t/${t.slug}/sign-in/sso`, {
    _csrf: browser.csrf(),
    email: who.email ?? '',
  })
  const started = await browser.once('GET', continuesTo(await form.text()) ?? '')
  const back = await idp.authorize(started.headers.get('location') ?? '', who)
  const callback = await browser.once('GET', back.pathname + back.search)
  assert.equal(callback.status, 303, await callback.text())
}

async function rolesOf(email: string) {
  const user = await userByEmail(server, t.tenantId, email)
  assert.ok(user)
  const list = await call('GET', 'users?limit=200', undefined)
  return {
    id: user.id,
    roles: list.body.items.find((u: { id: string }) => u.id === user.id).roles as string[],
  }
}

const changes = async (userId: string) =>
  (await auditRows(server, t.tenantId, 'UserRolesChanged'))
    .filter((r) => r.userId === userId)
    .map((r) => r.metadata)

test('the connection record shows its roleMapping by role name', async () => {
  const res = await call('GET', `sso-connections/${connectionId}`, undefined)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body.connection.roleMapping, [
    { claim: 'groups', value: 'eng', roles: ['Engineers'] },
    { claim: 'groups', value: 'ops', roles: ['Hooks', 'Operators'] },
  ])
})

test('each SSO sign-in replaces the mapped roles by those the ID token maps to; direct roles are kept', async () => {
  const who: IdpAccount = {
    sub: `sub-${hex()}`,
    email: `p-${hex()}@${domain}`,
    email_verified: true,
    groups: ['eng', 'unmapped'],
  }
  await ssoSignIn(who)
  const first = await rolesOf(who.email ?? '')
  assert.deepEqual(first.roles, ['Engineers'])
  assert.deepEqual(await changes(first.id), [{ added: ['Engineers'], removed: [], via: 'sso' }])

  // An admin gives a role directly; the next sign-in maps ops instead of eng.
  assert.equal((await call('PUT', `users/${first.id}/roles`, { roles: ['Hooks'] })).status, 200)
  await ssoSignIn({ ...who, groups: ['ops'] })
  assert.deepEqual((await rolesOf(who.email ?? '')).roles, ['Hooks', 'Operators'])
  const after = await changes(first.id)
  assert.deepEqual(after.at(-1), { added: ['Operators'], removed: ['Engineers'], via: 'sso' })

  // The same groups again: nothing changes, nothing is recorded.
  await ssoSignIn({ ...who, groups: ['ops'] })
  assert.equal((await changes(first.id)).length, after.length)

  // No group maps: the mapped role goes, the direct one (Hooks) stays.
  await ssoSignIn({ ...who, groups: [] })
  assert.deepEqual((await rolesOf(who.email ?? '')).roles, ['Hooks'])
  assert.deepEqual((await changes(first.id)).at(-1), {
    added: [],
    removed: ['Operators'],
    via: 'sso',
  })
})

test('a roleMapping naming an unknown role, set by an API key, or granting what the editor lacks is refused, changing nothing', async () => {
  const key = await insertApiKey(server, t.tenantId)
  await role('Owners', ['tenant:write'])
  await role('Connectors', ['connections:write'])
  const editor = await signup(server, t.slug)
  assert.equal(
    (await call('PUT', `users/${editor.user.id}/roles`, { roles: ['Connectors'] })).status,
    200,
  )
  await unchanged(server, t.tenantId, async () => {
    expectValidation(
      await call('PATCH', `sso-connections/${connectionId}`, {
        roleMapping: [{ claim: 'groups', value: 'x', roles: ['Engineers', 'Nobody'] }],
      }),
      'body.roleMapping.0.roles.1',
    )
    expectValidation(
      await call('PATCH', `sso-connections/${connectionId}`, {
        roleMapping: [{ claim: '', value: 'x', roles: [] }],
      }),
    )
    expectError(
      await call('PATCH', `sso-connections/${connectionId}`, { roleMapping: [] }, key),
      403,
      'api_key_not_allowed',
    )
    // The editor holds connections:write, not tenant:write: it cannot map Owners.
    expectError(
      await call(
        'PATCH',
        `sso-connections/${connectionId}`,
        { roleMapping: [{ claim: 'groups', value: 'x', roles: ['Owners'] }] },
        editor.accessToken,
      ),
      403,
      'permission_required',
    )
  })
  // A role deleted drops out of the mapping.
  const list = await call('GET', 'roles', undefined)
  const engineers = list.body.items.find((r: { name: string }) => r.name === 'Engineers')
  assert.equal((await call('DELETE', `roles/${engineers.id}`, undefined)).status, 200)
  const res = await call('GET', `sso-connections/${connectionId}`, undefined)
  assert.deepEqual(res.body.connection.roleMapping[0], { claim: 'groups', value: 'eng', roles: [] })
})
