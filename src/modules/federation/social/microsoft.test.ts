// The Microsoft preset (CONTRACT §19) against a stand-in of the identity platform's v2.0
// endpoint (test/fixtures/social.ts): a `common` connection signs in users of any directory,
// each ID token's issuer checked against its own `tid`; a connection of one directory refuses
// another's; a token whose issuer and `tid` disagree, for another audience, for another
// sign-in's nonce or signed by a key the directory does not publish is refused, nothing
// created; the address counts as verified only with `xms_edov`.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { after, before, test } from 'node:test'
import { auditRows, unchanged, userByEmail } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import {
  type MicrosoftAccount,
  type MicrosoftStandIn,
  startMicrosoftStandIn,
} from '../../../../test/fixtures/social.ts'
import {
  createTenant,
  signup,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../../test/helpers.ts'
import { PageClient } from '../../../../test/web/page-client.ts'
import { eq } from '../../../db/orm.ts'
import { users } from '../../../db/schema.ts'

let server: TestServer
let microsoft: MicrosoftStandIn
let t: TenantFixture
const hex = () => randomBytes(4).toString('hex')

before(async () => {
  microsoft = await startMicrosoftStandIn()
  server = await startServer({
    webhookAllowPrivate: true,
    socialProviderEndpoints: { microsoft: microsoft.endpoints },
  })
  t = await createTenant(server)
})
after(async () => {
  await server?.close()
  await microsoft?.close()
})

async function connect(extra: Record<string, unknown> = {}) {
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/social-connections`,
    { provider: 'microsoft', ...microsoft.addClient(), ...extra },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.connection.id as string
}

const person = (overrides: Partial<MicrosoftAccount> = {}): MicrosoftAccount => ({
  sub: `ms-${hex()}`,
  tid: randomUUID(),
  email: `someone-${hex()}@contoso-${hex()}.example.com`,
  name: 'Megan Bowen',
  xms_edov: true,
  ...overrides,
})

async function viaMicrosoft(id: string, who: MicrosoftAccount) {
  const browser = new PageClient(server)
  const started = await browser.once('GET', `/t/${t.slug}/social/${id}`)
  assert.equal(started.status, 303, await started.text())
  const authorization = started.headers.get('location') ?? ''
  const back = await microsoft.authorize(authorization, who)
  const callback = await browser.once('GET', back.pathname + back.search)
  return { authorization, callback }
}

test('common: users of any directory sign in, each token checked against its own directory’s issuer', async () => {
  const id = await connect()
  const { authorization, callback } = await viaMicrosoft(id, person())
  assert.ok(
    authorization.startsWith(`${microsoft.url}/common/oauth2/v2.0/authorize?`),
    authorization,
  )
  assert.equal(callback.status, 303, await callback.text())
  const other = person()
  const second = await viaMicrosoft(id, other)
  assert.equal(second.callback.status, 303, await second.callback.text())
  const user = await userByEmail(server, t.tenantId, other.email ?? '')
  assert.ok(user)
  assert.equal(user.emailVerified, true)
  const login = (await auditRows(server, t.tenantId, 'UserLogin')).find((r) => r.userId === user.id)
  assert.equal(login?.metadata?.provider, 'microsoft')
})

test('a connection of one directory refuses a user of another; the same directory signs in', async () => {
  const directory = randomUUID()
  const id = await connect({ issuer: directory })
  const stranger = person()
  const refused = await viaMicrosoft(id, stranger)
  assert.ok(
    refused.authorization.startsWith(`${microsoft.url}/${directory}/`),
    refused.authorization,
  )
  assert.equal(refused.callback.status, 401, await refused.callback.text())
  assert.equal(await userByEmail(server, t.tenantId, stranger.email ?? ''), undefined)
  const member = person({ tid: directory })
  assert.equal((await viaMicrosoft(id, member)).callback.status, 303)
})

test('an issuer that is not the token’s tid’s, another audience, another nonce, an unlisted key: refused, nothing created', async () => {
  const id = await connect()
  const tampers: [string, () => void][] = [
    [
      'issuer of another directory',
      () => {
        microsoft.tamper = (c) => ({ ...c, iss: `${microsoft.url}/${randomUUID()}/v2.0` })
      },
    ],
    [
      'tid without its issuer',
      () => {
        microsoft.tamper = (c) => ({ ...c, tid: randomUUID() })
      },
    ],
    [
      'the template itself',
      () => {
        microsoft.tamper = (c) => ({ ...c, iss: `${microsoft.url}/{tenantid}/v2.0` })
      },
    ],
    [
      'another audience',
      () => {
        microsoft.tamper = (c) => ({ ...c, aud: randomUUID() })
      },
    ],
    [
      'another nonce',
      () => {
        microsoft.tamper = (c) => ({ ...c, nonce: 'not-this-one' })
      },
    ],
    [
      'expired',
      () => {
        microsoft.tamper = (c) => ({ ...c, exp: Math.floor(Date.now() / 1000) - 600 })
      },
    ],
    [
      'an unlisted key',
      () => {
        microsoft.otherKey = true
      },
    ],
  ]
  for (const [what, apply] of tampers) {
    apply()
    try {
      const who = person()
      const { callback } = await viaMicrosoft(id, who)
      assert.equal(callback.status, 401, `${what}: ${await callback.text()}`)
      assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined, what)
    } finally {
      microsoft.tamper = undefined
      microsoft.otherKey = false
    }
  }
})

test('without xms_edov the address is unverified: a new account is unverified, an existing one is not linked', async () => {
  const id = await connect()
  const fresh = person({ xms_edov: undefined })
  assert.equal((await viaMicrosoft(id, fresh)).callback.status, 303)
  assert.equal((await userByEmail(server, t.tenantId, fresh.email ?? ''))?.emailVerified, false)
  const victim = await signup(server, t.slug)
  await server.deps.db
    .update(users)
    .set({ emailVerified: true })
    .where(eq(users.id, victim.user.id))
  const attacker = person({ email: victim.email, xms_edov: false })
  const { callback } = await viaMicrosoft(id, attacker)
  assert.equal(callback.status, 400, await callback.text())
  const failed = (await auditRows(server, t.tenantId, 'UserLoginFailed')).at(-1)
  assert.equal(failed?.metadata?.reason, 'email_taken')
})

test('a directory that is not an id, common or organizations is refused; nothing changed', async () => {
  await unchanged(server, t.tenantId, async () => {
    for (const issuer of [
      'consumers-ish',
      'https://login.microsoftonline.com/common/v2.0',
      'COMMON',
    ]) {
      const res = await server.request(
        'POST',
        `/v1/${t.slug}/social-connections`,
        { provider: 'microsoft', clientId: 'x', clientSecret: 'y', issuer },
        { token: t.admin.accessToken },
      )
      expectError(res, 400, 'validation')
    }
  })
})
