// TOTP secrets at rest (SPEC, Multi-factor; CONTRACT §1 ENCRYPTION_KEYS): AES-256-GCM under
// versioned keys, bound to their row, never stored in clear; new writes use the first key,
// older versions still decrypt, and `npm run rotate-keys` re-seals everything under the
// current key.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { auditRows, setUser, userByEmail } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { enrolTotp, totpAt } from '../../../test/fixtures/mfa.ts'
import { member, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  STRONG_PASSWORD,
  startServer,
  startTestServer,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import type { EncryptionKey } from '../../config.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

test('a TOTP secret is stored sealed under the current key version, never in clear', async () => {
  const t = await tenantWith(server, { mfaPolicy: 'Optional' })
  const u = await member(server, t.slug)
  const secret = await enrolTotp(server, t.slug, u.accessToken)
  const row = await userByEmail(server, t.tenantId, u.email)
  assert.ok(row.totpSecretEnc)
  assert.match(row.totpSecretEnc, /^v1:[\w-]+:[\w-]+:[\w-]+$/)
  assert.ok(!row.totpSecretEnc.includes(secret))
  assert.ok(!JSON.stringify(row).includes(secret))
  assert.equal(server.deps.cipher.decrypt(row.totpSecretEnc, `${t.tenantId}:${u.id}`), secret)
  // Bound to its row: the same ciphertext does not open for another user.
  assert.throws(() =>
    server.deps.cipher.decrypt(row.totpSecretEnc as string, `${t.tenantId}:${t.admin.user.id}`),
  )
  assert.ok(
    !JSON.stringify(await auditRows(server, t.tenantId)).includes(secret),
    'not in the audit log',
  )
  const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: u.accessToken })
  assert.ok(!JSON.stringify(me.body).includes(secret))
})

test('a sealed secret copied onto another user accepts no code there', async () => {
  const t = await tenantWith(server, { mfaPolicy: 'Required' })
  const alice = await member(server, t.slug)
  const bob = await member(server, t.slug)
  const secret = await enrolTotp(server, t.slug, alice.accessToken)
  const sealed = (await userByEmail(server, t.tenantId, alice.email)).totpSecretEnc
  await setUser(server, t.tenantId, bob.id, { totpSecretEnc: sealed, totpEnabled: true })
  const res = await server.request('POST', `/v1/${t.slug}/auth/login`, {
    email: bob.email,
    password: STRONG_PASSWORD,
    totpCode: totpAt(server, secret),
  })
  expectError(res, 401, 'invalid_mfa_code')
})

const key = (version: string): EncryptionKey => ({ version, key: randomBytes(32) })
const envKeys = (keys: EncryptionKey[]) =>
  keys.map((k) => `${k.version}:${k.key.toString('base64')}`).join(',')

/** A database of its own (rotation rewrites every row it sees), on the engine under test. */
async function scratchDatabase() {
  const dataDir = mkdtempSync(join(tmpdir(), 'rotate-keys-'))
  const base = process.env.DATABASE_URL
  if (!base) {
    return {
      databaseUrl: undefined,
      dataDir,
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  }
  const name = `rotate_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  return {
    databaseUrl: url.toString(),
    dataDir,
    drop: async () => {
      const c = new pg.Client({ connectionString: base })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

function rotateKeys(env: Record<string, string | undefined>) {
  const result = spawnSync(process.execPath, ['scripts/rotate-keys.ts'], {
    env: { ...process.env, ...env, NODE_ENV: 'development' },
    encoding: 'utf8',
  })
  return { status: result.status, out: result.stdout, err: result.stderr }
}

test('key rotation: old versions still decrypt, new writes use the first key, rotate-keys re-seals everything', async () => {
  const db = await scratchDatabase()
  const v1 = key('v1')
  const v2 = key('v2')
  const v3 = key('v3')
  const open = (keys: EncryptionKey[]) =>
    startServer({
      smtpUrl: sink.url,
      databaseUrl: db.databaseUrl,
      dataDir: db.dataDir,
      encryptionKeys: keys,
    })
  const cliEnv = (keys: EncryptionKey[]) => ({
    DATABASE_URL: db.databaseUrl ?? '',
    DATA_DIR: db.dataDir,
    ENCRYPTION_KEYS: envKeys(keys),
    JWT_SECRET: 'rotation-test-secret-rotation-test-secret',
  })
  const login = (s: TestServer, slug: string, email: string, secret: string) =>
    s.request('POST', `/v1/${slug}/auth/login`, {
      email,
      password: STRONG_PASSWORD,
      totpCode: totpAt(s, secret),
    })
  try {
    // 1. Under v1 only: Alice enrols fully, Bob starts an enrolment.
    let s = await open([v1])
    const t = await tenantWith(s, { mfaPolicy: 'Optional' })
    const alice = await member(s, t.slug)
    const aliceSecret = await enrolTotp(s, t.slug, alice.accessToken)
    const bob = await member(s, t.slug)
    const bobBegun = await s.request('POST', `/v1/${t.slug}/mfa/totp/enroll`, undefined, {
      token: bob.accessToken,
    })
    assert.equal(bobBegun.status, 200)
    assert.match((await userByEmail(s, t.tenantId, alice.email)).totpSecretEnc ?? '', /^v1:/)
    await s.close()

    // 2. v2 first, v1 still listed: v1 rows decrypt, new enrolments are sealed under v2.
    s = await open([v2, v1])
    s.clock.advance(60)
    assert.equal((await login(s, t.slug, alice.email, aliceSecret)).status, 200)
    const carol = await member(s, t.slug)
    const carolSecret = await enrolTotp(s, t.slug, carol.accessToken)
    assert.match((await userByEmail(s, t.tenantId, carol.email)).totpSecretEnc ?? '', /^v2:/)
    assert.match((await userByEmail(s, t.tenantId, alice.email)).totpSecretEnc ?? '', /^v1:/)
    await s.close()

    // 3. npm run rotate-keys with the same key list.
    const run = rotateKeys(cliEnv([v2, v1]))
    assert.equal(run.status, 0, run.err)
    assert.match(run.out, /2 re-encrypted under v2, 1 already current/)

    // 4. v1 retired: every secret still works, Bob can finish his enrolment.
    s = await open([v2])
    s.clock.advance(120)
    for (const u of [alice, carol]) {
      assert.match((await userByEmail(s, t.tenantId, u.email)).totpSecretEnc ?? '', /^v2:/)
    }
    assert.equal((await login(s, t.slug, alice.email, aliceSecret)).status, 200)
    assert.equal((await login(s, t.slug, carol.email, carolSecret)).status, 200)
    const bobDone = await s.request(
      'POST',
      `/v1/${t.slug}/mfa/totp/verify`,
      { code: totpAt(s, bobBegun.body.secret) },
      { token: bob.accessToken },
    )
    assert.equal(bobDone.status, 200, JSON.stringify(bobDone.body))
    await s.close()

    // 5. Running it again changes nothing; a key list missing the rows' key is reported.
    const again = rotateKeys(cliEnv([v2]))
    assert.equal(again.status, 0, again.err)
    assert.match(again.out, /0 re-encrypted under v2, 3 already current/)
    const lost = rotateKeys(cliEnv([v3]))
    assert.equal(lost.status, 1)
    assert.match(lost.err, /sealed under v2, which is not in ENCRYPTION_KEYS/)
  } finally {
    await db.drop()
  }
})

test('rotate-keys refuses a bad ENCRYPTION_KEYS with one clear line', () => {
  const run = rotateKeys({ ENCRYPTION_KEYS: 'v1:short', DATABASE_URL: 'memory://' })
  assert.equal(run.status, 1)
  assert.match(run.err, /config error: ENCRYPTION_KEYS/)
})
