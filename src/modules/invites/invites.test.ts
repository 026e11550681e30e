// POST invites, and who may call the invites routes (SPEC, Invites and Invite state
// table; CONTRACT §2 Invite record, defaults, already_member, superseding).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { oneEvent, setUser, unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { createKey, memberToken } from '../../../test/fixtures/apikeys.ts'
import { insertPendingUser } from '../../../test/fixtures/invites.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { and, eq } from '../../db/orm.ts'
import { invites, users } from '../../db/schema.ts'
import { hashToken } from '../../lib/crypto.ts'

const RECORD_KEYS = [
  'acceptedAt',
  'createdAt',
  'email',
  'expiresAt',
  'id',
  'invitedBy',
  'revokedAt',
  'role',
  'roles',
  'status',
]

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
let other: TenantFixture
let admin: string
let member: string

before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await createTenant(server, { name: 'Acme Rockets' })
  other = await createTenant(server)
  admin = t.admin.accessToken
  member = await memberToken(server, t.slug)
})
after(async () => {
  await sink.stop()
})

const path = (slug = t.slug) => `/v1/${slug}/invites`

async function invite(body: Record<string, unknown>, token = admin, slug = t.slug) {
  const res = await server.request('POST', path(slug), body, { token })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { token: string; invite: Record<string, any> }
}

async function inviteRow(id: string) {
  const rows = await server.deps.db.select().from(invites).where(eq(invites.id, id))
  return rows[0]
}

async function accept(token: string) {
  return server.request('POST', '/v1/invites/accept', { token, password: 'plum-orbit-canvas-77' })
}

/** Waits until every queued mail was handed to the sink. */
async function mailSettled() {
  await server.deps.mailer.drain()
}

describe('POST invites', () => {
  test('creates a Pending invitation with the defaults, mails the token, InviteCreated', async () => {
    const email = uniqueEmail('invitee')
    const res = await server.request('POST', path(), { email }, { token: admin })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(Object.keys(res.body).sort(), ['invite', 'token'])
    const { token, invite: record } = res.body
    assert.equal(typeof token, 'string')
    assert.ok(token.length >= 43, 'at least 256 bits')
    assert.deepEqual(Object.keys(record).sort(), RECORD_KEYS)
    assert.equal(record.email, email)
    assert.equal(record.role, 'Member')
    assert.equal(record.status, 'Pending')
    assert.equal(record.invitedBy, t.admin.user.id)
    assert.equal(record.acceptedAt, null)
    assert.equal(record.revokedAt, null)
    const now = server.clock.now().getTime()
    assert.equal(record.createdAt, new Date(now).toISOString())
    assert.equal(record.expiresAt, new Date(now + 604_800_000).toISOString())

    const mail = await sink.waitFor(email)
    assert.ok(mail.text.split('\n').includes(token), 'the token on a line of its own')
    assert.match(mail.text, /Acme Rockets/)
    assert.match(mail.subject, /Acme Rockets/)
    assert.ok(mail.html.includes(token))

    const row = await inviteRow(record.id)
    assert.equal(row.tokenHash, hashToken(token))
    assert.ok(!JSON.stringify(row).includes(token), 'the token itself is not stored')
    const event = await oneEvent(
      server,
      t.tenantId,
      'InviteCreated',
      (e) => e.metadata.inviteId === record.id,
    )
    assert.equal(event.email, email)
    assert.equal(event.actorType, 'user')
    assert.equal(event.actorId, t.admin.user.id)
    assert.equal(event.metadata.inviteId, record.id)
    assert.ok(!JSON.stringify(event).includes(token))
  })

  test('role, ttlSeconds and sendEmail are honoured', async () => {
    const email = uniqueEmail('admin-to-be')
    const { invite: record } = await invite({
      email,
      role: 'Admin',
      ttlSeconds: 60,
      sendEmail: false,
    })
    assert.equal(record.role, 'Admin')
    const created = Date.parse(record.createdAt)
    assert.equal(Date.parse(record.expiresAt) - created, 60_000)
    const big = await invite({ email: uniqueEmail(), ttlSeconds: 2_592_000, sendEmail: false })
    assert.equal(Date.parse(big.invite.expiresAt) - Date.parse(big.invite.createdAt), 2_592_000_000)
    await mailSettled()
    assert.equal(sink.to(email).length, 0, 'sendEmail false sends nothing')
  })

  test('a new invitation for a pending address revokes the older one', async () => {
    const email = uniqueEmail('twice')
    const first = await invite({ email, sendEmail: false })
    server.clock.advance(1)
    const second = await invite({ email: email.toUpperCase(), role: 'Admin', sendEmail: false })
    const old = await inviteRow(first.invite.id)
    assert.equal(old.revokedAt?.toISOString(), server.clock.now().toISOString())
    const revoked = await oneEvent(
      server,
      t.tenantId,
      'InviteRevoked',
      (e) => e.metadata.inviteId === first.invite.id,
    )
    assert.equal(revoked.metadata.inviteId, first.invite.id)
    assert.equal(revoked.metadata.reason, 'superseded')
    expectError(await accept(first.token), 401, 'invalid_invite')
    assert.equal((await accept(second.token)).status, 200)
  })

  test('parallel invitations of one address leave exactly one pending', async () => {
    const email = uniqueEmail('burst')
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        server.request('POST', path(), { email, sendEmail: false }, { token: admin }),
      ),
    )
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body))
    const rows = await server.deps.db
      .select()
      .from(invites)
      .where(and(eq(invites.tenantId, t.tenantId), eq(invites.emailNormalized, email)))
    assert.equal(rows.length, 6)
    assert.equal(rows.filter((r) => r.revokedAt === null).length, 1)
  })

  test('an address that belongs to a user is 409 already_member, whatever its case', async () => {
    const user = await signup(server, t.slug)
    await unchanged(server, t.tenantId, async () => {
      for (const email of [t.adminEmail, user.email, `  ${user.email.toUpperCase()} `]) {
        const res = await server.request('POST', path(), { email }, { token: admin })
        expectError(res, 409, 'already_member')
      }
    })
    await mailSettled()
    assert.equal(sink.to(user.email).length, 0)
  })

  test('a Suspended user keeps its address: 409 already_member, nothing created or mailed', async () => {
    const user = await signup(server, t.slug)
    await setUser(server, t.tenantId, user.user.id, { status: 'Suspended' })
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', path(), { email: user.email }, { token: admin }),
        409,
        'already_member',
      )
    })
    await mailSettled()
    assert.equal(sink.to(user.email).length, 0)
  })

  test('the address of a Pending user (a JIT sign-up never finished) can be invited', async () => {
    const email = uniqueEmail('jit')
    const userId = await insertPendingUser(server, t.tenantId, email)
    const { token, invite: record } = await invite({ email, role: 'Admin' })
    assert.equal(record.status, 'Pending')
    assert.equal(record.role, 'Admin')
    const mail = await sink.waitFor(email)
    assert.ok(mail.text.split('\n').includes(token), 'mailed like any invitation')
    const event = await oneEvent(
      server,
      t.tenantId,
      'InviteCreated',
      (e) => e.metadata.inviteId === record.id,
    )
    assert.equal(event.email, email)
    const [row] = await server.deps.db
      .select()
      .from(users)
      .where(and(eq(users.tenantId, t.tenantId), eq(users.id, userId)))
    assert.equal(row.status, 'Pending', 'inviting changes nothing about the user')
  })

  test('the address of a deleted user can be invited again', async () => {
    const user = await signup(server, t.slug)
    await setUser(server, t.tenantId, user.user.id, { deletedAt: server.clock.now() })
    const { invite: record } = await invite({ email: user.email, sendEmail: false })
    assert.equal(record.status, 'Pending')
  })

  test('an address that is a member of another tenant only can be invited', async () => {
    const elsewhere = await signup(server, other.slug)
    const { invite: record } = await invite({ email: elsewhere.email, sendEmail: false })
    assert.equal(record.status, 'Pending')
  })

  const badBodies: [string, unknown, string | undefined][] = [
    ['missing email', { role: 'Member' }, 'body.email'],
    ['a malformed email', { email: 'not-an-email' }, 'body.email'],
    ['a 255-character email', { email: `${'a'.repeat(243)}@example.com` }, 'body.email'],
    ['a numeric email', { email: 42 }, 'body.email'],
    ['an unknown role', { email: 'a@example.com', role: 'Owner' }, 'body.role'],
    ['a lower-case role', { email: 'a@example.com', role: 'admin' }, 'body.role'],
    ['ttlSeconds below 60', { email: 'a@example.com', ttlSeconds: 59 }, 'body.ttlSeconds'],
    [
      'ttlSeconds above 30 days',
      { email: 'a@example.com', ttlSeconds: 2_592_001 },
      'body.ttlSeconds',
    ],
    ['a fractional ttlSeconds', { email: 'a@example.com', ttlSeconds: 60.5 }, 'body.ttlSeconds'],
    ['ttlSeconds as a string', { email: 'a@example.com', ttlSeconds: '3600' }, 'body.ttlSeconds'],
    ['sendEmail as a string', { email: 'a@example.com', sendEmail: 'yes' }, 'body.sendEmail'],
    ['an array body', [{ email: 'a@example.com' }], undefined],
  ]
  for (const [what, body, issue] of badBodies) {
    test(`${what} is a 400 that creates and mails nothing`, async () => {
      await unchanged(server, t.tenantId, async () => {
        expectValidation(await server.request('POST', path(), body, { token: admin }), issue)
      })
      await mailSettled()
      assert.equal(sink.to('a@example.com').length, 0)
    })
  }

  test('malformed JSON, a wrong content type and an oversized body are 400s', async () => {
    await unchanged(server, t.tenantId, async () => {
      expectError(
        await server.request('POST', path(), undefined, { token: admin, raw: '{"email":' }),
        400,
        'malformed_json',
      )
      expectError(
        await server.request('POST', path(), undefined, {
          token: admin,
          raw: 'email=a@example.com',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        400,
        'unsupported_media_type',
      )
      expectError(
        await server.request(
          'POST',
          path(),
          { email: 'big@example.com', note: 'x'.repeat(70_000) },
          { token: admin },
        ),
        400,
        'body_too_large',
      )
    })
  })
})

describe('invites: who may call them', () => {
  test('an API key cannot invite an Admin: 403 api_key_not_allowed, nothing created or mailed', async () => {
    const key = await createKey(server, t.slug, admin)
    const email = uniqueEmail('key-admin')
    await unchanged(server, t.tenantId, async () => {
      for (const body of [
        { email, role: 'Admin' },
        { email, role: 'Admin', sendEmail: true },
      ]) {
        const res = await server.request('POST', path(), body, { token: key.plaintext })
        expectError(res, 403, 'api_key_not_allowed')
      }
    })
    await mailSettled()
    assert.equal(sink.to(email).length, 0)
  })

  test('an API key still invites Members, recorded as the apiKey actor', async () => {
    const key = await createKey(server, t.slug, admin)
    for (const body of [
      { email: uniqueEmail('by-key') },
      { email: uniqueEmail(), role: 'Member' },
    ]) {
      const { invite: record } = await invite({ ...body, sendEmail: false }, key.plaintext)
      assert.equal(record.role, 'Member')
      assert.equal(record.invitedBy, key.apiKey.id)
      const event = await oneEvent(
        server,
        t.tenantId,
        'InviteCreated',
        (e) => e.metadata.inviteId === record.id,
      )
      assert.equal(event.actorType, 'apiKey')
    }
  })

  const calls = () =>
    [
      ['POST', path(), { email: 'who@example.com' }],
      ['GET', path(), undefined],
      ['DELETE', `${path()}/00000000-0000-7000-8000-000000000000`, undefined],
    ] as const

  test('without a token: 401; a Member: 403 admin_required; nothing changes', async () => {
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        expectError(await server.request(method, url, body), 401, 'token_missing')
        expectError(
          await server.request(method, url, body, { token: member }),
          403,
          'admin_required',
        )
      }
    })
  })

  test("another tenant's admin token or key: 401; an unknown tenant: 404", async () => {
    const foreignKey = await createKey(server, other.slug, other.admin.accessToken)
    await unchanged(server, t.tenantId, async () => {
      for (const [method, url, body] of calls()) {
        const byToken = await server.request(method, url, body, { token: other.admin.accessToken })
        expectError(byToken, 401, 'token_invalid')
        const byKey = await server.request(method, url, body, { token: foreignKey.plaintext })
        expectError(byKey, 401, 'invalid_api_key')
        const unknown = await server.request(method, url.replace(t.slug, 'nope-404'), body, {
          token: admin,
        })
        expectError(unknown, 404, 'tenant_not_found')
      }
    })
  })
})
