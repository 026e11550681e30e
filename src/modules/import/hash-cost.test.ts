// Imported hashes are bounded by their whole cost (issue 36 F2): PBKDF2 by iterations ×
// 32-byte blocks of output, scrypt by memory × p, so a 750-byte PBKDF2 key cannot cost 24
// times what the iteration bound means; and a check dearer than four of the service's
// argon2id verifies runs in a lane of its own, so a tenant's costly imported rows cannot
// hold the hash slots another tenant's sign-in waits for.
import assert from 'node:assert/strict'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { before, test } from 'node:test'
import { setUser, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { dearHashLoad, hashLoad } from '../../lib/passwords.ts'

let server: TestServer
before(async (ctx) => {
  // One shared slot: whatever holds it, every other sign-in of the process waits for.
  server = await startTestServer(ctx, { hashConcurrency: 1, hashQueueLimit: 64 })
})

const importUsers = (t: TenantFixture, body: unknown) =>
  server.request('POST', `/v1/${t.slug}/users/import`, body, { token: t.admin.accessToken })
const login = (t: TenantFixture, email: string, password: string) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip: randomIp() })

const b64 = (bytes: number) => randomBytes(bytes).toString('base64').replace(/=+$/, '')
/** passlib's adapted base64: `.` for `+`, no padding. */
const ab64 = (bytes: number) => b64(bytes).replaceAll('+', '.')
const salt = b64(16)

test('import: PBKDF2 is bounded by iterations × output blocks and scrypt by memory × p; a 750-byte PBKDF2 key is hash_too_expensive', async () => {
  const t = await createTenant(server)
  const refused = [
    // The probe's row: 750 bytes of output (24 blocks, each running every iteration) fit
    // the 1,024-character field in passlib's and Django's forms.
    `$pbkdf2-sha256$2000000$$${ab64(750)}`,
    `pbkdf2_sha256$100000$$${randomBytes(750).toString('base64')}`,
    `$pbkdf2-sha256$i=1000000,l=700$${salt}$${b64(700)}`,
    `$pbkdf2-sha256$1000001$${ab64(16)}$${ab64(64)}`,
    // 16 MiB of memory passed over 16 times: 256 MiB of work.
    `$scrypt$ln=14,r=8,p=16$${ab64(16)}$${ab64(32)}`,
  ]
  const accepted = [
    `$pbkdf2-sha256$i=1000000,l=64$${salt}$${b64(64)}`,
    `pbkdf2_sha256$2000000$salt$${randomBytes(32).toString('base64')}`,
    `$scrypt$ln=14,r=8,p=8$${ab64(16)}$${ab64(32)}`,
  ]
  const res = await importUsers(t, {
    users: [...refused, ...accepted].map((passwordHash) => ({
      email: uniqueEmail('cost'),
      passwordHash,
    })),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(
    res.body.results.map((r: { status: string; reason?: string }) => r.reason ?? r.status),
    [...refused.map(() => 'hash_too_expensive'), ...accepted.map(() => 'created')],
  )

  // A row stored before the bound (here written straight to the table) is refused at sign-in
  // without being computed: 24 blocks × 1,000,000 iterations would take many seconds of CPU.
  const email = uniqueEmail('stored')
  const made = await importUsers(t, { users: [{ email }] })
  const id = made.body.results[0].id as string
  await setUser(server, t.tenantId, id, { passwordHash: refused[0] })
  const started = process.cpuUsage()
  const signIn = await login(t, email, 'any-password-at-all')
  const used = process.cpuUsage(started)
  expectError(signIn, 401, 'invalid_credentials')
  assert.ok((used.user + used.system) / 1000 < 1000, 'the refused hash was never computed')
  assert.equal((await userByEmail(server, t.tenantId, email))?.passwordHash, refused[0])
})

test("a dear imported hash runs in its own lane: another tenant's sign-in does not wait behind it", async () => {
  const migrated = await createTenant(server)
  const other = await createTenant(server)
  const member = await signup(server, other.slug)
  // Django's default today: 1,000,000 iterations, about ten of our argon2id verifies.
  const password = 'migrated-Password-1'
  const key = pbkdf2Sync(password, 'djangosalt', 1_000_000, 32, 'sha256').toString('base64')
  const emails = Array.from({ length: 5 }, () => uniqueEmail('django'))
  const res = await importUsers(migrated, {
    users: emails.map((email) => ({
      email,
      passwordHash: `pbkdf2_sha256$1000000$djangosalt$${key}`,
    })),
  })
  assert.ok(res.body.results.every((r: { status: string }) => r.status === 'created'))

  // Wrong passwords: each try computes the whole PBKDF2 and nothing is rehashed.
  const dear = emails.map((email) =>
    login(migrated, email, 'wrong-Password-2').then((r) => ({ status: r.status, at: Date.now() })),
  )
  const inFlight = () => {
    const load = [hashLoad(), dearHashLoad()]
    return load.reduce((n, l) => n + l.running + l.queued, 0)
  }
  while (inFlight() < emails.length) await new Promise((r) => setTimeout(r, 10))
  assert.equal(
    dearHashLoad().running + dearHashLoad().queued,
    emails.length,
    'all in the dear lane',
  )

  const ours = await login(other, member.email, member.password)
  const oursAt = Date.now()
  assert.equal(ours.status, 200, JSON.stringify(ours.body))
  const done = await Promise.all(dear)
  assert.ok(done.every((d) => d.status === 401))
  const lastDear = Math.max(...done.map((d) => d.at))
  assert.ok(
    oursAt < lastDear,
    `the argon2id sign-in ends before the last dear check (by ${lastDear - oursAt} ms): it did not queue behind them`,
  )
  // And the first sign-in still works: the right password is checked in the lane, then rehashed.
  assert.equal((await login(migrated, emails[0], password)).status, 200)
})
