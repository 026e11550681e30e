// Registering, listing and removing passkeys over HTTP with a software authenticator:
// the options, the checks of the registration response (challenge single use, 5 minutes,
// this tenant, this ceremony, this user; origin, RP ID, user verification), the audit rows
// and the security alerts, and who may remove what.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { createKey } from '../../../test/fixtures/apikeys.ts'
import { FLAG, registerPasskey, SoftAuthenticator } from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq } from '../../db/orm.ts'
import { passkeys, webauthnChallenges } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  // Letters only: the alert's account link holds the slug, whose random part could hold six
  // digits in a row and make the "no 6-digit number" check below fail by chance.
  const letters = [...crypto.getRandomValues(new Uint8Array(10))].map((b) => 'abcdefghij'[b % 10])
  t = await createTenant(server, { name: 'Acme Passkeys', slug: `pk-${letters.join('')}` })
})
after(async () => {
  await sink.stop()
})

const CHROME_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36'

async function member(slug = t.slug) {
  const user = await signup(server, slug)
  return { ...user, id: user.user.id as string, token: user.accessToken as string }
}

const options = (token: string, slug = t.slug) =>
  server.request('POST', `/v1/${slug}/me/passkeys/registration-options`, undefined, { token })

const register = (token: string, body: unknown, slug = t.slug, headers?: Record<string, string>) =>
  server.request('POST', `/v1/${slug}/me/passkeys`, body, { token, headers })

const list = (token: string, slug = t.slug) =>
  server.request('GET', `/v1/${slug}/me/passkeys`, undefined, { token })

async function challengeRow(tenantId: string, challenge: string) {
  const [row] = await server.deps.db
    .select()
    .from(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.tenantId, tenantId),
        eq(webauthnChallenges.challengeHash, hashToken(challenge)),
      ),
    )
  return row
}

describe('registration options', () => {
  test('RP = host of PUBLIC_URL and the tenant name; the user; UV required; own passkeys excluded', async () => {
    const m = await member()
    const first = await options(m.token)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    const o = first.body
    assert.deepEqual(o.rp, { name: 'Acme Passkeys', id: 'auth.test' })
    assert.equal(o.user.name, m.email)
    assert.equal(o.user.displayName, m.email)
    assert.equal(Buffer.from(o.user.id, 'base64url').toString('hex'), m.id.replaceAll('-', ''))
    assert.deepEqual(o.excludeCredentials, [])
    assert.equal(o.authenticatorSelection.userVerification, 'required')
    assert.equal(o.authenticatorSelection.residentKey, 'preferred')
    assert.equal(o.attestation, 'none')
    assert.equal(o.timeout, 300_000)
    assert.deepEqual(
      o.pubKeyCredParams.map((p: { alg: number }) => p.alg),
      [-8, -7, -257],
    )
    assert.match(o.challenge, /^[A-Za-z0-9_-]{43}$/)
    const row = await challengeRow(t.tenantId, o.challenge)
    assert.equal(row.ceremony, 'registration')
    assert.equal(row.userId, m.id)
    assert.equal(row.expiresAt.getTime() - row.createdAt.getTime(), 300_000)

    const { authenticator } = await registerPasskey(server, t.slug, m.token)
    const again = await options(m.token)
    assert.deepEqual(again.body.excludeCredentials, [
      { id: authenticator.id, type: 'public-key', transports: ['internal'] },
    ])
  })

  test('an API key cannot register: 401 user_token_required', async () => {
    const key = await createKey(server, t.slug, t.admin.accessToken)
    const res = await unchanged(server, t.tenantId, () => options(key.plaintext))
    expectError(res, 401, 'user_token_required')
    expectError(await list(key.plaintext), 401, 'user_token_required')
  })

  test('no token: 401', async () => {
    const res = await server.request('POST', `/v1/${t.slug}/me/passkeys/registration-options`)
    assert.equal(res.status, 401)
  })
})

describe('registering', () => {
  test('the response verifies: stored, listed, PasskeyRegistered, a security alert', async () => {
    const m = await member()
    const begun = await options(m.token)
    const authenticator = new SoftAuthenticator()
    const mark = await auditMark(server, t.tenantId)
    const mails = sink.to(m.email).length
    const res = await register(m.token, { response: authenticator.create(begun.body) }, t.slug, {
      'user-agent': CHROME_LINUX,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), ['createdAt', 'id', 'lastUsedAt', 'name'])
    assert.equal(res.body.name, 'Chrome on Linux')
    assert.equal(res.body.lastUsedAt, null)

    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['PasskeyRegistered'],
    )
    assert.equal(events[0].userId, m.id)
    assert.equal(events[0].actorId, m.id)
    assert.equal(events[0].metadata.passkeyId, res.body.id)

    const [row] = await server.deps.db.select().from(passkeys).where(eq(passkeys.id, res.body.id))
    assert.equal(row.credentialId, authenticator.id)
    assert.equal(row.userId, m.id)
    assert.equal(row.signCount, 0)
    assert.deepEqual(row.transports, ['internal'])
    assert.equal(row.deviceType, 'singleDevice')
    assert.ok(row.publicKey.length > 60)
    assert.notEqual((await challengeRow(t.tenantId, begun.body.challenge)).usedAt, null)

    const listed = await list(m.token)
    assert.deepEqual(listed.body, { items: [res.body] })

    const mail = await sink.waitFor(m.email, mails + 1)
    assert.match(mail.subject, /^Security alert: a passkey was added/)
    assert.doesNotMatch(mail.text, /(?<!\d)\d{6}(?!\d)/)
  })

  test('a name given is kept (trimmed); the list is newest first', async () => {
    const m = await member()
    await registerPasskey(server, t.slug, m.token, { name: '  Work laptop ' })
    server.clock.advance(1)
    await registerPasskey(server, t.slug, m.token, { name: 'Phone' })
    const listed = await list(m.token)
    assert.deepEqual(
      listed.body.items.map((p: { name: string }) => p.name),
      ['Phone', 'Work laptop'],
    )
  })

  test('a registration challenge is single use', async () => {
    const m = await member()
    const begun = await options(m.token)
    const response = new SoftAuthenticator().create(begun.body)
    assert.equal((await register(m.token, { response })).status, 200)
    const again = new SoftAuthenticator().create(begun.body)
    expectError(await register(m.token, { response: again }), 400, 'validation')
  })

  test('a registration challenge expires after 5 minutes', async () => {
    const m = await member()
    const begun = await options(m.token)
    server.clock.advance(301)
    const res = await register(m.token, { response: new SoftAuthenticator().create(begun.body) })
    expectError(res, 400, 'validation')
    assert.deepEqual((await list(m.token)).body.items, [])
  })

  const refusals: [string, object][] = [
    ['a wrong origin', { origin: 'https://auth.test' }],
    ['a wrong RP ID', { rpId: 'evil.test' }],
    ['user verification missing', { flags: FLAG.UP | FLAG.AT }],
    ['the sign-in type (webauthn.get)', { type: 'webauthn.get' }],
  ]
  for (const [name, override] of refusals) {
    test(`${name}: 400 validation, nothing stored, no audit, no mail`, async () => {
      const m = await member()
      const begun = await options(m.token)
      const response = new SoftAuthenticator().create(begun.body, override)
      const mark = await auditMark(server, t.tenantId)
      const mails = sink.to(m.email).length
      const res = await register(m.token, { response })
      expectError(res, 400, 'validation')
      assert.deepEqual(await auditSince(server, t.tenantId, mark), [])
      assert.deepEqual((await list(m.token)).body.items, [])
      await server.deps.mailer.drain()
      assert.equal(sink.to(m.email).length, mails)
    })
  }

  test('another user’s registration challenge is refused', async () => {
    const a = await member()
    const b = await member()
    const begun = await options(a.token)
    const res = await register(b.token, { response: new SoftAuthenticator().create(begun.body) })
    expectError(res, 400, 'validation')
    assert.deepEqual((await list(b.token)).body.items, [])
  })

  test('a sign-in challenge does not register', async () => {
    const m = await member()
    const signIn = await server.request('POST', `/v1/${t.slug}/auth/passkey/options`, {})
    const response = new SoftAuthenticator().create({ ...signIn.body, user: { id: 'x' } })
    expectError(await register(m.token, { response }), 400, 'validation')
  })

  test('another tenant’s challenge is refused', async () => {
    const other = await createTenant(server)
    const there = await member(other.slug)
    const m = await member()
    const begun = await options(there.token, other.slug)
    const res = await register(m.token, { response: new SoftAuthenticator().create(begun.body) })
    expectError(res, 400, 'validation')
    assert.equal((await challengeRow(other.tenantId, begun.body.challenge)).usedAt, null)
  })

  test('a credential already registered: 409 already_enrolled', async () => {
    const m = await member()
    const { authenticator } = await registerPasskey(server, t.slug, m.token)
    const begun = await options(m.token)
    const res = await register(m.token, { response: authenticator.create(begun.body) })
    expectError(res, 409, 'already_enrolled')
    assert.equal((await list(m.token)).body.items.length, 1)
    // Registered by another user of the tenant: the same answer, nothing stored.
    const other = await member()
    const theirs = await options(other.token)
    const dup = await register(other.token, { response: authenticator.create(theirs.body) })
    expectError(dup, 409, 'already_enrolled')
    assert.deepEqual((await list(other.token)).body.items, [])
  })

  test('the same authenticator may register in another tenant (credentials are per tenant)', async () => {
    const m = await member()
    const { authenticator } = await registerPasskey(server, t.slug, m.token)
    const other = await createTenant(server)
    const there = await member(other.slug)
    await registerPasskey(server, other.slug, there.token, { authenticator })
    assert.equal((await list(there.token, other.slug)).body.items.length, 1)
  })

  test('an account holds at most 20 passkeys', async () => {
    const m = await member()
    for (let i = 0; i < 20; i++) await registerPasskey(server, t.slug, m.token)
    const res = await unchanged(server, t.tenantId, () => options(m.token))
    expectError(res, 400, 'validation')
  })
})

describe('removing', () => {
  test('one’s own passkey: gone, PasskeyRemoved, a security alert; it no longer signs in', async () => {
    const m = await member()
    const { authenticator, passkey } = await registerPasskey(server, t.slug, m.token)
    const mark = await auditMark(server, t.tenantId)
    await server.deps.mailer.drain() // the alert of the registration first
    const mails = sink.to(m.email).length
    const res = await server.request(
      'DELETE',
      `/v1/${t.slug}/me/passkeys/${passkey.id}`,
      undefined,
      {
        token: m.token,
      },
    )
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ok: true })
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => [e.action, e.userId, e.metadata.passkeyId]),
      [['PasskeyRemoved', m.id, passkey.id]],
    )
    assert.deepEqual((await list(m.token)).body.items, [])
    const mail = await sink.waitFor(m.email, mails + 1)
    assert.match(mail.subject, /^Security alert: a passkey was removed/)

    const signIn = await server.request('POST', `/v1/${t.slug}/auth/passkey/options`, {})
    const verify = await server.request('POST', `/v1/${t.slug}/auth/passkey/verify`, {
      response: authenticator.get(signIn.body),
    })
    expectError(verify, 401, 'invalid_credentials')
  })

  test('another user’s passkey, an unknown id, another tenant’s: 404 not_found, nothing changed', async () => {
    const owner = await member()
    const { passkey } = await registerPasskey(server, t.slug, owner.token)
    const other = await member()
    const elsewhere = await createTenant(server)
    const there = await member(elsewhere.slug)
    const theirs = await registerPasskey(server, elsewhere.slug, there.token)
    for (const id of [passkey.id, crypto.randomUUID(), theirs.passkey.id]) {
      const res = await unchanged(
        server,
        [t.tenantId, elsewhere.tenantId],
        () =>
          server.request('DELETE', `/v1/${t.slug}/me/passkeys/${id}`, undefined, {
            token: other.token,
          }),
        { sink },
      )
      expectError(res, 404, 'not_found')
    }
    assert.equal((await list(owner.token)).body.items.length, 1)
  })

  test('an API key cannot remove a passkey: 401 user_token_required, nothing removed', async () => {
    const m = await member()
    const { passkey } = await registerPasskey(server, t.slug, m.token)
    const key = await createKey(server, t.slug, t.admin.accessToken)
    const res = await unchanged(
      server,
      t.tenantId,
      () =>
        server.request('DELETE', `/v1/${t.slug}/me/passkeys/${passkey.id}`, undefined, {
          token: key.plaintext,
        }),
      { sink },
    )
    expectError(res, 401, 'user_token_required')
    assert.deepEqual(
      (await list(m.token)).body.items.map((p: { id: string }) => p.id),
      [passkey.id],
    )
  })

  test('an id that is not a UUID: 400 validation', async () => {
    const m = await member()
    const res = await unchanged(server, t.tenantId, () =>
      server.request('DELETE', `/v1/${t.slug}/me/passkeys/not-a-uuid`, undefined, {
        token: m.token,
      }),
    )
    expectError(res, 400, 'validation')
  })
})
