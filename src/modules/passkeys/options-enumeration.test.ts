// CONTRACT §16: POST auth/passkey/options {email} must not tell which addresses have an
// account, or a passkey. Every address gets exactly 3 credential ids (its own passkeys
// first, then decoys; all of its own when it has more), the decoys shaped like the
// tenant's newest passkey (id length, transports; a platform passkey's shape, 32 bytes and
// `internal`, while there is none), the same ids on every ask, none shared by two addresses.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import {
  registerPasskey,
  SoftAuthenticator,
  signInOptions,
} from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
})

interface Descriptor {
  id: string
  type: string
  transports?: string[]
}

async function options(slug: string, email: string) {
  return (await signInOptions(server, slug, email)) as unknown as Record<string, unknown> & {
    allowCredentials: Descriptor[]
  }
}

/** Everything an answer shows but the challenge and the ids themselves. */
function shapeOf(answer: Record<string, unknown> & { allowCredentials: Descriptor[] }) {
  const { challenge, allowCredentials, ...rest } = answer
  return {
    keys: Object.keys(answer).sort(),
    rest,
    challengeLength: String(challenge).length,
    credentials: allowCredentials.map((c) => ({
      keys: Object.keys(c).sort(),
      bytes: Buffer.from(c.id, 'base64url').length,
      type: c.type,
      transports: c.transports,
    })),
  }
}

const ids = (answer: { allowCredentials: Descriptor[] }) => answer.allowCredentials.map((c) => c.id)

async function suspend(t: TenantFixture, userId: string) {
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/users/${userId}`,
    { status: 'Suspended' },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
}

test('passkey-options.no-enumeration: without any passkey in the tenant, 3 decoys shaped as a platform passkey', async () => {
  const t = await createTenant(server)
  const passwordOnly = await signup(server, t.slug)
  for (const email of [uniqueEmail('nobody'), passwordOnly.email]) {
    const answer = await options(t.slug, email)
    assert.equal(answer.allowCredentials.length, 3)
    for (const c of answer.allowCredentials) {
      assert.equal(Buffer.from(c.id, 'base64url').length, 32)
      assert.deepEqual(c.transports, ['internal'])
      assert.equal(c.type, 'public-key')
    }
  }
})

test('passkey-options.no-enumeration: unknown, password-only, suspended, deleted and passkey holders answer alike', async () => {
  const t = await createTenant(server)
  // An older passkey of another shape, whose user is then deleted.
  const deleted = await signup(server, t.slug)
  const old = await registerPasskey(server, t.slug, deleted.accessToken)
  const gone = await server.request('DELETE', `/v1/${t.slug}/users/${deleted.user.id}`, undefined, {
    token: t.admin.accessToken,
  })
  assert.equal(gone.status, 200, JSON.stringify(gone.body))
  // The tenant's newest passkey: a 48-byte id, two transports.
  const holder = await signup(server, t.slug)
  const authenticator = new SoftAuthenticator(undefined, {
    idBytes: 48,
    transports: ['hybrid', 'internal'],
  })
  await registerPasskey(server, t.slug, holder.accessToken, { authenticator })
  const passwordOnly = await signup(server, t.slug)
  const suspended = await signup(server, t.slug)
  await suspend(t, suspended.user.id)

  const addresses = {
    unknown: uniqueEmail('nobody'),
    passwordOnly: passwordOnly.email,
    suspended: suspended.email,
    deleted: deleted.email,
    holder: holder.email,
  }
  const answers: Record<string, Awaited<ReturnType<typeof options>>> = {}
  for (const [who, email] of Object.entries(addresses)) answers[who] = await options(t.slug, email)

  const expected = shapeOf(answers.unknown)
  assert.equal(expected.credentials.length, 3)
  for (const c of expected.credentials) {
    assert.equal(c.bytes, 48)
    assert.deepEqual(c.transports, ['hybrid', 'internal'])
  }
  for (const [who, answer] of Object.entries(answers)) {
    assert.deepEqual(shapeOf(answer), expected, who)
  }
  // The holder's own passkey comes first; the deleted user's old one is not listed.
  assert.equal(answers.holder.allowCredentials[0].id, authenticator.id)
  assert.ok(!ids(answers.deleted).includes(old.authenticator.id))

  // Stable per address (the address as typed in another case too), distinct across them.
  for (const [who, email] of Object.entries(addresses)) {
    const again = await options(t.slug, who === 'unknown' ? email.toUpperCase() : email)
    assert.deepEqual(ids(again), ids(answers[who]), who)
  }
  const all = Object.values(answers).flatMap(ids)
  assert.equal(new Set(all).size, all.length, 'no id is shared by two addresses or two slots')
  // Another tenant answers the same address with other decoys.
  const other = await createTenant(server)
  const elsewhere = ids(await options(other.slug, addresses.unknown))
  assert.ok(elsewhere.every((id) => !all.includes(id)))
})

test('passkey-options.no-enumeration: an address with more than 3 passkeys lists all of its own, no decoy', async () => {
  const t = await createTenant(server)
  const user = await signup(server, t.slug)
  const own: string[] = []
  for (let i = 0; i < 4; i++) {
    own.push((await registerPasskey(server, t.slug, user.accessToken)).authenticator.id)
  }
  const answer = await options(t.slug, user.email)
  assert.deepEqual(ids(answer).sort(), own.sort())
})

test('a passkey signs in with its id among the decoys', async () => {
  const t = await createTenant(server)
  const user = await signup(server, t.slug)
  const { authenticator } = await registerPasskey(server, t.slug, user.accessToken)
  const answer = await options(t.slug, user.email)
  assert.equal(answer.allowCredentials.length, 3)
  assert.equal(answer.allowCredentials[0].id, authenticator.id)
  const res = await server.request('POST', `/v1/${t.slug}/auth/passkey/verify`, {
    response: authenticator.get(answer as unknown as { challenge: string }),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.user.id, user.user.id)
})
