// POST users/import (CONTRACT §14): hashes made by other systems' own libraries
// (test/fixtures/import/generate.ts) sign in once with their password, are argon2id after
// it, and refuse a wrong password without a rehash; the bounds, bad input and admin rules.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, test } from 'node:test'
import { rotateKeys } from '../../../scripts/rotate-keys.ts'
import { auditMark, auditSince, tenantSnapshot, unchanged, userByEmail } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import {
  createTenant,
  eventually,
  randomIp,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { FieldCipher } from '../../lib/crypto.ts'
import { sealedSignerKey } from '../../lib/foreign-hashes.ts'
import { signerKeySeal } from './signer-key.ts'

interface HashCase {
  format: string
  password: string
  passwordHash: string
  passwordSalt?: string
}
const FIXTURES = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/import/hashes.json', import.meta.url), 'utf8'),
) as { firebase: Record<string, unknown>; cases: HashCase[] }

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const importUsers = (t: TenantFixture, body: unknown, token = t.admin.accessToken as string) =>
  server.request('POST', `/v1/${t.slug}/users/import`, body, { token })
const login = (t: TenantFixture, email: string, password: string) =>
  server.request('POST', `/v1/${t.slug}/auth/login`, { email, password }, { ip: randomIp() })

test('import: every hash format signs in once with its password, is argon2id after, and a wrong password fails without a rehash', async () => {
  const t = await createTenant(server)
  const users = FIXTURES.cases.map((c) => ({
    email: uniqueEmail(c.format),
    passwordHash: c.passwordHash,
    ...(c.passwordSalt ? { passwordSalt: c.passwordSalt } : {}),
    emailVerified: true,
    displayName: `User ${c.format}`,
  }))
  const mark = await auditMark(server, t.tenantId)
  const res = await importUsers(t, { users, hashConfig: { firebase: FIXTURES.firebase } })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(
    res.body.results.map((r: { status: string }) => r.status),
    users.map(() => 'created'),
    JSON.stringify(res.body),
  )
  const events = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'UserImported',
  )
  assert.equal(events.length, users.length, 'one UserImported per created user')
  assert.ok(!JSON.stringify(events).includes(FIXTURES.cases[0].passwordHash), 'no hash audited')

  for (const [i, c] of FIXTURES.cases.entries()) {
    const email = users[i].email
    const stored = (await userByEmail(server, t.tenantId, email))?.passwordHash as string
    if (c.format.startsWith('firebase')) {
      assert.match(stored, /^\$firebase-scrypt\$/)
      assert.ok(!stored.includes(FIXTURES.firebase.signerKey as string), 'signer key sealed')
    } else assert.equal(stored, c.passwordHash, c.format)

    const wrong = await login(t, email, `${c.password}x`)
    expectError(wrong, 401, 'invalid_credentials')
    assert.equal((await userByEmail(server, t.tenantId, email))?.passwordHash, stored, c.format)

    const ok = await login(t, email, c.password)
    assert.equal(ok.status, 200, `${c.format}: ${JSON.stringify(ok.body)}`)
    const after = (await userByEmail(server, t.tenantId, email))?.passwordHash as string
    assert.match(after, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/, `${c.format} rehashed`)

    const again = await login(t, email, c.password)
    assert.equal(again.status, 200, `${c.format} signs in with the new hash`)
    expectError(await login(t, email, `${c.password}x`), 401, 'invalid_credentials')
  }
})

test('import: onConflict skip (default) leaves existing users; update changes hash and profile; duplicates in a batch are skipped', async () => {
  const t = await createTenant(server)
  const [bcrypt, django] = [FIXTURES.cases[0], FIXTURES.cases[6]]
  const email = uniqueEmail('conflict')
  const first = await importUsers(t, {
    users: [
      { email, passwordHash: bcrypt.passwordHash, givenName: 'Ada' },
      { email: email.toUpperCase(), passwordHash: django.passwordHash },
    ],
  })
  assert.equal(first.status, 200)
  const id = first.body.results[0].id
  assert.deepEqual(first.body.results, [
    { index: 0, status: 'created', id },
    { index: 1, status: 'skipped', reason: 'duplicate_in_batch' },
  ])

  const skipped = await unchanged(server, t.tenantId, () =>
    importUsers(t, { users: [{ email, passwordHash: django.passwordHash }] }),
  )
  assert.deepEqual(skipped.body.results, [{ index: 0, status: 'skipped', id, reason: 'exists' }])

  const updated = await importUsers(t, {
    users: [{ email, passwordHash: django.passwordHash, givenName: 'Grace', role: 'Admin' }],
    onConflict: 'update',
  })
  assert.deepEqual(updated.body.results, [{ index: 0, status: 'updated', id }])
  const row = await userByEmail(server, t.tenantId, email)
  assert.equal(row?.passwordHash, django.passwordHash)
  assert.equal(row?.givenName, 'Grace')
  assert.equal(row?.role, 'Member', 'role is left to PATCH users')
  expectError(await login(t, email, bcrypt.password), 401, 'invalid_credentials')
  assert.equal((await login(t, email, django.password)).status, 200)

  // A Firebase hash written over an existing user is sealed to that user's row.
  const firebase = FIXTURES.cases.find((c) => c.format === 'firebase-scrypt') as HashCase
  const again = await importUsers(t, {
    users: [{ email, passwordHash: firebase.passwordHash }],
    hashConfig: { firebase: FIXTURES.firebase },
    onConflict: 'update',
  })
  assert.deepEqual(again.body.results, [{ index: 0, status: 'updated', id }])
  assert.equal((await login(t, email, firebase.password)).status, 200)
})

test("import: a password replaced by an update ends the user's sessions (refresh and access tokens refused); a profile-only update ends none", async () => {
  const t = await createTenant(server)
  const [bcrypt] = FIXTURES.cases
  const email = uniqueEmail('reset')
  const created = await importUsers(t, { users: [{ email, passwordHash: bcrypt.passwordHash }] })
  assert.equal(created.body.results[0].status, 'created')
  const session = await login(t, email, bcrypt.password)
  assert.equal(session.status, 200, JSON.stringify(session.body))
  const me = (token: string) =>
    server.request('GET', `/v1/${t.slug}/me`, undefined, { token }).then((r) => r.status)
  const refresh = (refreshToken: string) =>
    server.request('POST', `/v1/${t.slug}/auth/refresh`, { refreshToken }, { ip: randomIp() })

  const profileOnly = await importUsers(t, {
    users: [{ email, givenName: 'Kept' }],
    onConflict: 'update',
  })
  assert.equal(profileOnly.body.results[0].status, 'updated')
  assert.equal(await me(session.body.accessToken), 200, 'no password given: the session stays')
  const rotated = await refresh(session.body.refreshToken)
  assert.equal(rotated.status, 200, JSON.stringify(rotated.body))

  const mark = await auditMark(server, t.tenantId)
  const replaced = await importUsers(t, {
    users: [{ email, passwordHash: FIXTURES.cases[6].passwordHash }],
    onConflict: 'update',
  })
  assert.equal(replaced.body.results[0].status, 'updated')
  const revoked = (await auditSince(server, t.tenantId, mark)).filter(
    (e) => e.action === 'SessionRevoked',
  )
  assert.deepEqual(
    revoked.map((e) => (e.metadata as { reason: string }).reason),
    ['password-changed'],
    'one session, ended as a password change ends it',
  )
  expectError(await refresh(rotated.body.refreshToken), 401, 'session_revoked')
  assert.ok(
    await eventually(async () => (await me(rotated.body.accessToken)) === 401, 5000),
    'the access token is refused within 5 s (CONTRACT §4)',
  )
  assert.equal((await login(t, email, FIXTURES.cases[6].password)).status, 200)
})

test('import: absurd costs are hash_too_expensive and never tried; malformed hashes are unsupported_hash', async () => {
  const t = await createTenant(server)
  const salt = 'c2FsdHNhbHRzYWx0c2FsdA'
  const hash = 'aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g'
  const expensive = [
    `$2b$15$${'a'.repeat(53)}`,
    `$2a$31$${'a'.repeat(53)}`,
    `$argon2id$v=19$m=4194304,t=3,p=1$${salt}$${hash}`,
    `$argon2i$v=19$m=65536,t=11,p=1$${salt}$${hash}`,
    `$scrypt$ln=30,r=8,p=1$${salt}$${hash}`,
    `$scrypt$ln=18,r=8,p=1$${salt}$${hash}`,
    'pbkdf2_sha256$2000001$salt$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=',
    `$pbkdf2-sha256$999999999$${salt}$${hash}`,
    `$pbkdf2-sha256$i=2000001,l=32$${salt}$${hash}`,
  ]
  const malformed = [
    'plaintext-password',
    '$1$saltsalt$abcdefghijklmnopqrstuv',
    '$2b$10$short',
    `$2b$03$${'a'.repeat(53)}`,
    `$argon2d$v=19$m=4096,t=3,p=1$${salt}$${hash}`,
    `$argon2id$v=19$m=4096,t=3$${salt}$${hash}`,
    `$scrypt$ln=14,r=8$${salt}$${hash}`,
    'pbkdf2_sha1$10000$salt$aGFzaA==',
    '$firebase-scrypt$r=8,m=14$Bw==$c2FsdA==$aGFzaA==$v1:a:b:c',
    'sha256$abc$def',
  ]
  const users = [...expensive, ...malformed].map((passwordHash) => ({
    email: uniqueEmail('bad'),
    passwordHash,
  }))
  // CPU time of this process (the service, its hashing threads and, on PGlite, the
  // database) while the import is answered: unlike the wall clock, a busy machine does not
  // inflate it, and the snapshots before and after are left out.
  let cpuMs = 0
  const res = await unchanged(server, t.tenantId, async () => {
    const before = process.cpuUsage()
    const answer = await importUsers(t, { users })
    const used = process.cpuUsage(before)
    cpuMs = (used.user + used.system) / 1000
    return answer
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(
    res.body.results.map((r: { reason: string }) => r.reason),
    [...expensive.map(() => 'hash_too_expensive'), ...malformed.map(() => 'unsupported_hash')],
  )
  assert.ok(
    res.body.results.every((r: { status: string }) => r.status === 'error'),
    'nothing created',
  )
  // One bcrypt at cost 15 alone takes seconds of CPU (at cost 31, days): nothing was computed.
  assert.ok(cpuMs < 1000, `answered with ${cpuMs.toFixed(0)} ms of CPU`)

  // Firebase rounds and memCost beyond the bounds, and a Firebase hash without its config.
  const firebase = FIXTURES.cases.find((c) => c.format === 'firebase-scrypt') as HashCase
  for (const [config, reason] of [
    [{ ...FIXTURES.firebase, rounds: 9 }, 'hash_too_expensive'],
    [{ ...FIXTURES.firebase, memCost: 15 }, 'hash_too_expensive'],
    [undefined, 'unsupported_hash'],
  ] as const) {
    const one = await unchanged(server, t.tenantId, () =>
      importUsers(t, {
        users: [{ email: uniqueEmail('fb'), passwordHash: firebase.passwordHash }],
        ...(config ? { hashConfig: { firebase: config } } : {}),
      }),
    )
    assert.deepEqual(one.body.results, [{ index: 0, status: 'error', reason }])
  }
})

test('import: 1,001 users is 400 validation and creates nothing; bad bodies are 400', async () => {
  const t = await createTenant(server)
  const users = Array.from({ length: 1001 }, (_, i) => ({ email: `u${i}@example.com` }))
  const res = await unchanged(server, t.tenantId, () => importUsers(t, { users }))
  expectValidation(res)
  // The request's own shape; a row's field outside its rule is that row's error (below).
  for (const body of [
    {},
    [],
    'users',
    { users: [] },
    { users: 'a@example.com' },
    { users: { 0: { email: 'a@example.com' } } },
    { users: ['a@example.com'] },
    { users: [{ email: 'a@example.com' }, null] },
    { users: [{ displayName: 'No address' }] },
    { users: [{ email: 'a@example.com' }], onConflict: 'merge' },
    { users: [{ email: 'a@example.com', passwordHash: 5 }] },
    { users: [{ email: 'a@example.com', emailVerified: 'yes' }] },
    { users: [{ email: 'a@example.com' }], hashConfig: { firebase: { signerKey: 'a' } } },
    { users: [{ email: 'a@example.com' }], hashConfig: 'firebase' },
  ]) {
    expectValidation(await unchanged(server, t.tenantId, () => importUsers(t, body)))
  }
})

test("import: a row with a field outside its rule is that row's error; the good rows go in and nothing else changes", async () => {
  const t = await createTenant(server)
  const bcrypt = FIXTURES.cases[0]
  const shared = uniqueEmail('shared')
  const good = [
    { email: uniqueEmail('good'), passwordHash: bcrypt.passwordHash },
    {
      email: uniqueEmail('full'),
      role: 'Admin',
      status: 'Suspended',
      createdAt: '2019-05-04T03:02:01Z',
      displayName: 'é'.repeat(200),
      externalId: 'x'.repeat(256),
    },
  ]
  const bad: [Record<string, unknown>, string][] = [
    [{ email: 'not-an-email' }, 'invalid_email'],
    [{ email: '' }, 'invalid_email'],
    [{ email: 'two words@example.com' }, 'invalid_email'],
    [{ email: `${'a'.repeat(65)}@example.com` }, 'invalid_email'],
    [{ email: 'zero\u200bwidth@example.com' }, 'invalid_email'],
    [{ email: shared, displayName: 'x'.repeat(201) }, 'validation'],
    [{ email: uniqueEmail('b'), displayName: '' }, 'validation'],
    [{ email: uniqueEmail('b'), givenName: 'x'.repeat(201) }, 'validation'],
    [{ email: uniqueEmail('b'), familyName: '' }, 'validation'],
    [{ email: uniqueEmail('b'), externalId: 'x'.repeat(257) }, 'validation'],
    [{ email: uniqueEmail('b'), passwordHash: '' }, 'validation'],
    [{ email: uniqueEmail('b'), passwordHash: `$2b$10$${'a'.repeat(1018)}` }, 'validation'],
    [
      { email: uniqueEmail('b'), passwordHash: bcrypt.passwordHash, passwordSalt: '' },
      'validation',
    ],
    [{ email: uniqueEmail('b'), role: 'Owner' }, 'validation'],
    [{ email: uniqueEmail('b'), role: 'admin' }, 'validation'],
    [{ email: uniqueEmail('b'), status: 'Deleted' }, 'validation'],
    [{ email: uniqueEmail('b'), createdAt: 'yesterday' }, 'validation'],
    [{ email: uniqueEmail('b'), createdAt: '2019-05-04' }, 'validation'],
    [{ email: uniqueEmail('b'), createdAt: '0000-01-01T00:00:00Z' }, 'validation'],
  ]
  // The same address as the refused row above: not its duplicate, since that row is not in.
  const users = [good[0], ...bad.map(([u]) => u), good[1], { email: shared.toUpperCase() }]
  const goodIndexes = [0, bad.length + 1, bad.length + 2]

  const before = await tenantSnapshot(server, t.tenantId)
  const res = await importUsers(t, { users })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const results = res.body.results as { index: number; status: string; id?: string }[]
  const ids = goodIndexes.map((i) => results[i].id as string)
  assert.deepEqual(results, [
    { index: 0, status: 'created', id: ids[0] },
    ...bad.map(([, reason], i) => ({ index: i + 1, status: 'error', reason })),
    { index: bad.length + 1, status: 'created', id: ids[1] },
    { index: bad.length + 2, status: 'created', id: ids[2] },
  ])

  const full = await userByEmail(server, t.tenantId, good[1].email)
  assert.equal(full?.role, 'Admin')
  assert.equal(full?.status, 'Suspended')
  assert.equal(full?.createdAt.toISOString(), '2019-05-04T03:02:01.000Z')
  assert.equal(full?.displayName, good[1].displayName)
  assert.equal((await userByEmail(server, t.tenantId, shared))?.displayName, null)

  // Only the three users and their UserImported events were added.
  const after = await tenantSnapshot(server, t.tenantId)
  const created = new Set(ids)
  const added = after.audit.slice(before.audit.length)
  assert.deepEqual(
    added.map((e) => [e.action, e.userId]).sort(),
    ids.map((id) => ['UserImported', id]).sort(),
  )
  assert.deepEqual(
    {
      ...after,
      users: after.users.filter((u) => !created.has(u.id)),
      audit: after.audit.slice(0, before.audit.length),
    },
    before,
  )
  assert.equal((await login(t, good[0].email, bcrypt.password)).status, 200)
})

test('import: an address is stored as signup stores it, so the user signs in with it as they type it', async () => {
  const t = await createTenant(server)
  const bcrypt = FIXTURES.cases[0]
  const tag = crypto.randomUUID().slice(0, 8)
  // "José" with a combining acute (NFD), mixed case, spaces around.
  const typed = `  Jose\u0301.${tag}@Example.COM `
  const res = await importUsers(t, { users: [{ email: typed, passwordHash: bcrypt.passwordHash }] })
  assert.equal(res.body.results[0].status, 'created', JSON.stringify(res.body))
  const row = await userByEmail(server, t.tenantId, `josé.${tag}@example.com`)
  assert.equal(row?.email, `José.${tag}@Example.COM`)
  assert.equal(row?.emailNormalized, `josé.${tag}@example.com`)
  for (const email of [typed, `JOSÉ.${tag}@EXAMPLE.COM`, `jose\u0301.${tag}@example.com`]) {
    assert.equal((await login(t, email, bcrypt.password)).status, 200, email)
  }
  // The same person signing up again, spelled another way, is taken.
  const signup = await server.request(
    'POST',
    `/v1/${t.slug}/auth/signup`,
    { email: `josé.${tag}@example.com`, password: 'plum-orbit-canvas-77' },
    { ip: randomIp() },
  )
  expectError(signup, 400, 'email_taken')
})

test('import: 1,000 users in a body over the default 64 KiB limit are accepted', async () => {
  const t = await createTenant(server)
  const hash = FIXTURES.cases[0].passwordHash
  const users = Array.from({ length: 1000 }, (_, i) => ({
    email: `bulk-${i}-${t.slug}@example.com`,
    passwordHash: hash,
    displayName: `Bulk user number ${i}`,
  }))
  assert.ok(JSON.stringify({ users }).length > 64 * 1024)
  const res = await importUsers(t, { users })
  assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300))
  assert.equal(
    res.body.results.filter((r: { status: string }) => r.status === 'created').length,
    1000,
  )
})

test('import: a Member gets 403 admin_required; an API key works but may not import Admins; another tenant is 401; no token 401', async () => {
  const t = await createTenant(server)
  const other = await createTenant(server)
  const body = { users: [{ email: uniqueEmail('m') }] }
  const member = await memberToken(server, t.slug)
  expectError(
    await unchanged(server, t.tenantId, () => importUsers(t, body, member)),
    403,
    'admin_required',
  )
  const foreign = await unchanged(server, [t.tenantId, other.tenantId], () =>
    importUsers(t, body, other.admin.accessToken),
  )
  assert.equal(foreign.status, 401)
  const anonymous = await unchanged(server, t.tenantId, () =>
    server.request('POST', `/v1/${t.slug}/users/import`, body),
  )
  assert.equal(anonymous.status, 401)

  const { plaintext } = await createKey(server, t.slug, t.admin.accessToken)
  const res = await importUsers(
    t,
    {
      users: [
        { email: uniqueEmail('k'), role: 'Member' },
        { email: uniqueEmail('k'), role: 'Admin' },
      ],
    },
    plaintext,
  )
  assert.equal(res.status, 200)
  assert.equal(res.body.results[0].status, 'created')
  assert.deepEqual(res.body.results[1], {
    index: 1,
    status: 'error',
    reason: 'api_key_not_allowed',
  })
  const unknown = await server.request('POST', '/v1/no-such-tenant-x/users/import', body, {
    token: plaintext,
  })
  expectError(unknown, 404, 'tenant_not_found')
})

test('import: npm run rotate-keys re-seals the Firebase signer key inside an imported hash', async () => {
  const t = await createTenant(server)
  const c = FIXTURES.cases.find((x) => x.format === 'firebase-scrypt') as HashCase
  const email = uniqueEmail('rotate')
  const res = await importUsers(t, {
    users: [{ email, passwordHash: c.passwordHash }],
    hashConfig: { firebase: FIXTURES.firebase },
  })
  const id = res.body.results[0].id as string
  const before = (await userByEmail(server, t.tenantId, email))?.passwordHash as string
  assert.match(sealedSignerKey(before) ?? '', /^v1:/)

  const v2 = { version: 'v2', key: Buffer.alloc(32, 9) }
  const reports = await rotateKeys(
    server.deps.database,
    new FieldCipher([v2, ...server.deps.config.encryptionKeys]),
  )
  const report = reports.find((r) => r.name.includes('Firebase'))?.report
  assert.ok(report && report.rotated >= 1 && report.unreadable.length === 0)
  const after = (await userByEmail(server, t.tenantId, email))?.passwordHash as string
  assert.match(sealedSignerKey(after) ?? '', /^v2:/)
  assert.equal(after.slice(0, after.lastIndexOf('$')), before.slice(0, before.lastIndexOf('$')))
  const opened = signerKeySeal(new FieldCipher([v2]), t.tenantId, id).open(
    sealedSignerKey(after) ?? '',
  )
  assert.equal(opened, FIXTURES.firebase.signerKey)
  // Sealed to its row: another user's id does not open it.
  const elsewhere = signerKeySeal(new FieldCipher([v2]), t.tenantId, crypto.randomUUID())
  assert.equal(elsewhere.open(sealedSignerKey(after) ?? ''), undefined)
})
