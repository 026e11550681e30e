// The credential guard (users/credentials.ts, issue 36 F1): an API key acts as the tenant's
// admin but must never take over a user it could not have made. SCIM PUT/PATCH refuse to
// set the password or address of an Admin, or the password of a user with a second factor
// (TOTP or a passkey), with 403 in SCIM's error schema and nothing changed; import's
// onConflict update turns such a row into an error (`credential_protected`) whoever sends
// it, and the rest of the batch goes in. A plain Member's password and address still change.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { unchanged, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import { enrolTotp } from '../../../test/fixtures/mfa.ts'
import { registerPasskey } from '../../../test/fixtures/passkeys.ts'
import {
  expectScimError,
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import {
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

const FIXTURES = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/import/hashes.json', import.meta.url), 'utf8'),
) as { cases: { format: string; password: string; passwordHash: string }[] }
const BCRYPT = FIXTURES.cases[0]
const NEW_PASSWORD = 'attacker-chosen-Secret-9'

type Member = Awaited<ReturnType<typeof signup>>
let server: TestServer
let t: ScimTenant
let withTotp: Member
let withPasskey: Member
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await scimTenant(server)
  withTotp = await signup(server, t.slug)
  await enrolTotp(server, t.slug, withTotp.accessToken)
  withPasskey = await signup(server, t.slug)
  await registerPasskey(server, t.slug, withPasskey.accessToken)
  // The probe's setting: no second factor asked at sign-in, even of an enrolled user.
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { mfaPolicy: 'Disabled' },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
})

const login = (email: string, password: string) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip: randomIp() })
const setPassword = (id: string, password = NEW_PASSWORD) =>
  t.scim('PATCH', `/Users/${id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'replace', path: 'password', value: password }],
  })

test('an API key cannot set an Admin password through SCIM: PATCH and PUT are 403, nothing changes, the admin password still signs in and the attacker one does not', async () => {
  const adminId = t.admin.user.id as string
  const patched = await unchanged(server, t.tenantId, () => setPassword(adminId))
  expectScimError(patched, 403)
  assert.match(patched.body.detail, /password/)

  const put = await unchanged(server, t.tenantId, () =>
    t.scim('PUT', `/Users/${adminId}`, {
      schemas: [USER_SCHEMA],
      userName: t.adminEmail,
      password: NEW_PASSWORD,
    }),
  )
  expectScimError(put, 403)

  // The rest of the attack: a sign-in as the Admin with the key's password fails.
  expectError(await login(t.adminEmail, NEW_PASSWORD), 401, 'invalid_credentials')
  assert.equal((await login(t.adminEmail, STRONG_PASSWORD)).status, 200)
})

test("an API key cannot change an Admin's address through SCIM (userName or the primary email)", async () => {
  const adminId = t.admin.user.id as string
  const other = uniqueEmail('takeover')
  for (const body of [
    { schemas: [PATCH_SCHEMA], Operations: [{ op: 'replace', path: 'userName', value: other }] },
    {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: 'replace', path: 'emails[type eq "work"].value', value: other }],
    },
  ]) {
    const res = await unchanged(server, t.tenantId, () =>
      t.scim('PATCH', `/Users/${adminId}`, body),
    )
    expectScimError(res, 403)
    assert.match(res.body.detail, /address/)
  }
  const put = await unchanged(server, t.tenantId, () =>
    t.scim('PUT', `/Users/${adminId}`, { schemas: [USER_SCHEMA], userName: other }),
  )
  expectScimError(put, 403)
  // A change that leaves the credentials alone still goes through.
  const named = await t.scim('PATCH', `/Users/${adminId}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'replace', path: 'displayName', value: 'The Admin' }],
  })
  assert.equal(named.status, 200, JSON.stringify(named.body))
})

test('an API key cannot set the password of a Member with TOTP or with a passkey; a plain Member is set as before', async () => {
  for (const member of [withTotp, withPasskey]) {
    const res = await unchanged(server, t.tenantId, () => setPassword(member.user.id))
    expectScimError(res, 403)
    assert.match(res.body.detail, /second factor/)
    expectError(await login(member.email, NEW_PASSWORD), 401, 'invalid_credentials')
  }
  // Their address is the directory's to change (only an Admin's is kept from keys).
  const renamed = uniqueEmail('renamed')
  const moved = await t.scim('PATCH', `/Users/${withPasskey.user.id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'replace', path: 'userName', value: renamed }],
  })
  assert.equal(moved.status, 200, JSON.stringify(moved.body))

  const plain = await signup(server, t.slug)
  assert.equal((await setPassword(plain.user.id)).status, 200)
  assert.equal((await login(plain.email, NEW_PASSWORD)).status, 200)
})

test("import onConflict update never replaces an Admin's or a second-factor user's password, with a key or an Admin token; the other rows go in", async () => {
  const key = await insertApiKey(server, t.tenantId)
  const plain = await signup(server, t.slug)
  const before = {
    admin: (await userByEmail(server, t.tenantId, t.adminEmail))?.passwordHash,
    totp: (await userByEmail(server, t.tenantId, withTotp.email))?.passwordHash,
  }
  for (const token of [key, t.admin.accessToken as string]) {
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/users/import`,
      {
        users: [
          { email: t.adminEmail, passwordHash: BCRYPT.passwordHash, givenName: 'Mallory' },
          { email: withTotp.email, passwordHash: BCRYPT.passwordHash },
          { email: plain.email, passwordHash: BCRYPT.passwordHash, givenName: 'Plain' },
        ],
        onConflict: 'update',
      },
      { token },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.results, [
      { index: 0, status: 'error', id: t.admin.user.id, reason: 'credential_protected' },
      { index: 1, status: 'error', id: withTotp.user.id, reason: 'credential_protected' },
      { index: 2, status: 'updated', id: plain.user.id },
    ])
  }
  const admin = await userByEmail(server, t.tenantId, t.adminEmail)
  assert.equal(admin?.passwordHash, before.admin, "the Admin's password is unchanged")
  assert.notEqual(admin?.givenName, 'Mallory', 'the refused row changed nothing')
  assert.equal((await userByEmail(server, t.tenantId, withTotp.email))?.passwordHash, before.totp)
  expectError(await login(t.adminEmail, BCRYPT.password), 401, 'invalid_credentials')
  expectError(await login(withTotp.email, BCRYPT.password), 401, 'invalid_credentials')
  assert.equal((await login(plain.email, BCRYPT.password)).status, 200)
})
