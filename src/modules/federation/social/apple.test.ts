// Sign in with Apple (CONTRACT §19) through the real HTTP app and database, against the
// Apple stand-in (test/fixtures/social.ts: oidc-provider behind a proxy that checks the
// client secret JWT with the public half of the developer's key, as Apple does): the
// connection's Apple fields and their refusals, the form POST callback, the `user` field's
// names for a new account only, private-relay addresses as verified, and a secret signed
// with a key Apple does not trust refused with nothing created.
import assert from 'node:assert/strict'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { auditRows, unchanged, userByEmail } from '../../../../test/db.ts'
import { expectError } from '../../../../test/envelope.ts'
import { type AppleStandIn, startAppleStandIn } from '../../../../test/fixtures/social.ts'
import {
  createTenant,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../../../test/helpers.ts'
import type { IdpAccount } from '../../../../test/oidc-provider.ts'
import { PageClient } from '../../../../test/web/page-client.ts'
import { and, eq } from '../../../db/orm.ts'
import { identities, socialConnections } from '../../../db/schema.ts'
import { FieldCipher } from '../../../lib/crypto.ts'
import { rotateColumn } from '../../../lib/rotation.ts'
import { appleKeyColumn, openAppleKey } from './apple.ts'

let server: TestServer
let apple: AppleStandIn
let t: TenantFixture
const hex = () => randomBytes(4).toString('hex')
const appleId = () => randomBytes(5).toString('hex').toUpperCase()

const p256 = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString()

before(async () => {
  apple = await startAppleStandIn()
  server = await startServer({
    webhookAllowPrivate: true,
    socialProviderEndpoints: { apple: { issuer: apple.url } },
  })
  t = await createTenant(server)
})

after(async () => {
  await server?.close()
  await apple?.close()
})

const base = (slug = t.slug) => `/v1/${slug}/social-connections`
const call = (method: string, path: string, body?: unknown) =>
  server.request(method, path, body, { token: t.admin.accessToken })

/**
 * An Apple connection signing with `signWith`, whose client is registered at the stand-in
 * as trusting `trusted` (the same key unless told).
 */
async function connectApple(signWith = p256(), trusted = signWith) {
  const fields = { teamId: appleId(), keyId: appleId() }
  const made = await call('POST', base(), {
    provider: 'apple',
    clientId: 'pending',
    apple: { ...fields, privateKey: signWith },
  })
  assert.equal(made.status, 200, JSON.stringify(made.body))
  const { id, callbackUrl } = made.body.connection
  const { clientId } = await apple.addClient(callbackUrl, { ...fields, privateKeyPem: trusted })
  const patched = await call('PATCH', `${base()}/${id}`, { clientId })
  assert.equal(patched.status, 200, JSON.stringify(patched.body))
  return { id: id as string, clientId, ...fields }
}

const relayUser = (overrides: Partial<IdpAccount> = {}): IdpAccount => ({
  sub: `000${hex()}.${hex()}${hex()}.0${hex()}`,
  email: `${hex()}${hex()}@privaterelay.appleid.com`,
  ...overrides,
})

/** The browser: the hosted button, Apple's sign-in, and Apple's page posting the form. */
async function viaApple(
  browser: PageClient,
  id: string,
  who: IdpAccount,
  name?: { firstName: string; lastName: string },
) {
  const started = await browser.once('GET', `/t/${t.slug}/social/${id}`)
  assert.equal(started.status, 303, await started.text())
  const authorization = started.headers.get('location') ?? ''
  assert.ok(authorization.startsWith(`${apple.url}/`), authorization)
  const form = await apple.authorize(authorization, who, name)
  // Apple's page posts the form: a cross-site POST, which the /v1 callback takes.
  const callback = await fetch(new URL(form.action.pathname, server.url), {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams(form.fields).toString(),
    headers: {
      cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://appleid.apple.com',
      'sec-fetch-site': 'cross-site',
      'x-forwarded-for': browser.ip,
    },
  })
  return { authorization, form, callback }
}

const identityRows = (connectionId: string) =>
  server.deps.db
    .select()
    .from(identities)
    .where(and(eq(identities.tenantId, t.tenantId), eq(identities.source, connectionId)))

describe('Apple connections', () => {
  test('created with its Apple fields; the private key and no client secret; the key never answered', async () => {
    const key = p256()
    const made = await call('POST', base(), {
      provider: 'apple',
      clientId: 'com.example.web',
      apple: { teamId: 'ABCDE12345', keyId: 'KEY1234567', privateKey: key },
    })
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const c = made.body.connection
    assert.equal(c.name, 'Apple')
    assert.equal(c.hasClientSecret, false)
    assert.deepEqual(c.apple, { teamId: 'ABCDE12345', keyId: 'KEY1234567', hasPrivateKey: true })
    assert.deepEqual(c.scopes, ['openid', 'email', 'name'])
    const body = (x: unknown) => JSON.stringify(x)
    const keyBody = key.split('\n')[1]
    assert.ok(!body(made.body).includes(keyBody))
    const read = await call('GET', `${base()}/${c.id}`)
    assert.deepEqual(read.body, made.body)
    const listed = await call('GET', base())
    assert.ok(!body(listed.body).includes(keyBody))
    const [row] = await server.deps.db
      .select()
      .from(socialConnections)
      .where(eq(socialConnections.id, c.id))
    assert.ok(row.applePrivateKeyEnc && !row.applePrivateKeyEnc.includes(keyBody), 'sealed')
    const changed = await call('PATCH', `${base()}/${c.id}`, { apple: { keyId: 'KEY7654321' } })
    assert.equal(changed.status, 200, JSON.stringify(changed.body))
    assert.deepEqual(changed.body.connection.apple, {
      teamId: 'ABCDE12345',
      keyId: 'KEY7654321',
      hasPrivateKey: true,
    })
    const audited = (await auditRows(server, t.tenantId, 'SocialConnectionCreated')).find(
      (r) => r.metadata?.connectionId === c.id,
    )
    assert.ok(audited && !body(audited).includes(keyBody))
  })

  test('bad Apple fields: 400 validation at the field, nothing changed', async () => {
    const apple = { teamId: 'ABCDE12345', keyId: 'KEY1234567', privateKey: p256() }
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString()
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString()
    const sec1 = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'sec1', format: 'pem' })
      .toString()
    const publicOnly = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ type: 'spki', format: 'pem' })
      .toString()
    const google = (
      await call('POST', base(), { provider: 'google', clientId: 'x', clientSecret: 'y' })
    ).body.connection.id
    const made = await call('POST', base(), { provider: 'apple', clientId: 'x', apple })
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const id = made.body.connection.id
    const at = (res: Awaited<ReturnType<typeof call>>, path: string) => {
      expectError(res, 400, 'validation')
      const paths = res.body.details.issues.map((i: { path: string }) => i.path)
      assert.ok(paths.includes(path), JSON.stringify(res.body))
    }
    await unchanged(server, t.tenantId, async () => {
      at(await call('POST', base(), { provider: 'apple', clientId: 'x' }), 'body.apple')
      at(
        await call('POST', base(), { provider: 'apple', clientId: 'x', clientSecret: 'y', apple }),
        'body.clientSecret',
      )
      at(
        await call('POST', base(), { provider: 'google', clientId: 'x', clientSecret: 'y', apple }),
        'body.apple',
      )
      at(await call('POST', base(), { provider: 'google', clientId: 'x' }), 'body.clientSecret')
      for (const privateKey of ['not a key', rsa, p384, sec1, publicOnly, `${apple.privateKey}x`]) {
        at(
          await call('POST', base(), {
            provider: 'apple',
            clientId: 'x',
            apple: { ...apple, privateKey },
          }),
          'body.apple.privateKey',
        )
        at(
          await call('PATCH', `${base()}/${id}`, { apple: { privateKey } }),
          'body.apple.privateKey',
        )
      }
      for (const fields of [
        { ...apple, teamId: 'short' },
        { ...apple, keyId: 'lower12345' },
        { teamId: apple.teamId, keyId: apple.keyId },
      ]) {
        expectError(
          await call('POST', base(), { provider: 'apple', clientId: 'x', apple: fields }),
          400,
          'validation',
        )
      }
      at(await call('PATCH', `${base()}/${id}`, { clientSecret: 'y' }), 'body.clientSecret')
      at(await call('PATCH', `${base()}/${google}`, { apple }), 'body.apple')
    })
  })

  test('npm run rotate-keys re-seals the Apple key under the first ENCRYPTION_KEYS entry; it stays the same', async () => {
    const tenant = await createTenant(server)
    const key = p256()
    const made = await server.request(
      'POST',
      base(tenant.slug),
      {
        provider: 'apple',
        clientId: 'com.example.web',
        apple: { teamId: appleId(), keyId: appleId(), privateKey: key },
      },
      { token: tenant.admin.accessToken },
    )
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const id = made.body.connection.id
    const [v1] = server.deps.config.encryptionKeys
    const rotated = new FieldCipher([{ version: 'v2', key: Buffer.alloc(32, 42) }, v1])
    const column = appleKeyColumn.rotation(server.deps.db, rotated)
    const start = {
      tenantId: tenant.tenantId,
      id: '00000000-0000-0000-0000-000000000000',
      sealed: '',
    }
    const report = await rotateColumn(rotated, {
      ...column,
      scan: async (after, limit) =>
        (await column.scan(after ?? start, limit)).filter((r) => r.tenantId === tenant.tenantId),
    })
    assert.equal(report.rotated, 1, JSON.stringify(report))
    const [row] = await server.deps.db
      .select()
      .from(socialConnections)
      .where(eq(socialConnections.id, id))
    assert.equal(rotated.versionOf(row.applePrivateKeyEnc ?? ''), 'v2')
    assert.equal(openAppleKey(rotated, tenant.tenantId, id, row.applePrivateKeyEnc ?? ''), key)
  })
})

describe('signing in with Apple', () => {
  test('a first sign-in by form POST makes a verified account (a private-relay address) named by the `user` field; the stand-in saw an ES256 secret', async () => {
    const c = await connectApple()
    const who = relayUser()
    const browser = new PageClient(server)
    const seen = apple.secrets.length
    const { authorization, form, callback } = await viaApple(browser, c.id, who, {
      firstName: 'Ada',
      lastName: 'Lovelace',
    })
    const asked = new URL(authorization).searchParams
    assert.equal(asked.get('response_mode'), 'form_post')
    assert.equal(asked.get('scope'), 'openid email name')
    assert.ok(asked.get('nonce'))
    assert.equal(asked.get('code_challenge_method'), 'S256')
    assert.ok(form.fields.user, 'Apple sends the user field the first time')
    assert.equal(callback.status, 303, await callback.text())
    assert.equal(callback.headers.get('location'), `/t/${t.slug}/account`)
    const user = await userByEmail(server, t.tenantId, who.email ?? '')
    assert.ok(user)
    assert.equal(user.emailVerified, true)
    assert.equal(user.givenName, 'Ada')
    assert.equal(user.familyName, 'Lovelace')
    const links = await identityRows(c.id)
    assert.equal(links.length, 1)
    assert.equal(links[0].subject, who.sub)
    const login = (await auditRows(server, t.tenantId, 'UserLogin')).find(
      (r) => r.userId === user.id,
    )
    assert.equal(login?.metadata?.provider, 'apple')

    const secrets = apple.secrets.slice(seen)
    assert.equal(secrets.length, 1)
    const [secret] = secrets
    assert.equal(secret.accepted, true)
    assert.equal(secret.header.alg, 'ES256')
    assert.equal(secret.header.kid, c.keyId)
    assert.equal(secret.claims.iss, c.teamId)
    assert.equal(secret.claims.sub, c.clientId)
    assert.equal(secret.claims.aud, 'https://appleid.apple.com')
    const { iat, exp } = secret.claims as { iat: number; exp: number }
    assert.ok(exp > iat && exp - iat <= 180 * 24 * 60 * 60, `${iat} ${exp}`)

    // The next sign-in: the link; a `user` field sent again names nobody anew.
    const again = await viaApple(new PageClient(server), c.id, who)
    assert.equal(again.form.fields.user, undefined)
    assert.equal(again.callback.status, 303, await again.callback.text())
    const third = new PageClient(server)
    const started = await third.once('GET', `/t/${t.slug}/social/${c.id}`)
    const next = await apple.authorize(started.headers.get('location') ?? '', who)
    const withUser = await third.once('POST', next.action.pathname, {
      ...next.fields,
      user: JSON.stringify({ name: { firstName: 'Eve', lastName: 'Mallory' } }),
    })
    assert.equal(withUser.status, 303, await withUser.text())
    const after = await userByEmail(server, t.tenantId, who.email ?? '')
    assert.equal(after?.givenName, 'Ada')
    assert.equal(after?.familyName, 'Lovelace')
    assert.equal((await identityRows(c.id)).length, 1)
  })

  test('Apple’s email_verified "true" counts; a plain address Apple did not verify does not', async () => {
    const c = await connectApple()
    const verified = relayUser({ email: `v-${hex()}@icloud.example`, email_verified: 'true' })
    const one = await viaApple(new PageClient(server), c.id, verified)
    assert.equal(one.callback.status, 303, await one.callback.text())
    assert.equal((await userByEmail(server, t.tenantId, verified.email ?? ''))?.emailVerified, true)
    const plain = relayUser({ email: `u-${hex()}@icloud.example`, email_verified: 'false' })
    const two = await viaApple(new PageClient(server), c.id, plain)
    assert.equal(two.callback.status, 303, await two.callback.text())
    assert.equal((await userByEmail(server, t.tenantId, plain.email ?? ''))?.emailVerified, false)
  })

  test('the form POST callback: a state not this browser’s, none, or Apple’s cancel is refused with nothing created; the JSON API beside it takes no form', async () => {
    const c = await connectApple()
    const who = relayUser()
    const browser = new PageClient(server)
    const started = await browser.once('GET', `/t/${t.slug}/social/${c.id}`)
    const form = await apple.authorize(started.headers.get('location') ?? '', who, {
      firstName: 'Not',
      lastName: 'Made',
    })
    const callback = form.action.pathname
    const other = await new PageClient(server).once('POST', callback, form.fields)
    assert.equal(other.status, 400, await other.text())
    const none = await browser.once('POST', callback, { code: form.fields.code })
    assert.equal(none.status, 400, await none.text())
    const cancelled = await browser.once('POST', callback, {
      state: form.fields.state,
      error: 'user_cancelled_authorize',
    })
    assert.equal(cancelled.status, 401, await cancelled.text())
    // The cancel spent the state: the code that came with it cannot be used now.
    const late = await browser.once('POST', callback, form.fields)
    assert.equal(late.status, 400, await late.text())
    assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    assert.equal((await identityRows(c.id)).length, 0)

    await unchanged(server, t.tenantId, async () => {
      const res = await server.request('POST', base(), undefined, {
        token: t.admin.accessToken,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        raw: new URLSearchParams({
          provider: 'github',
          clientId: 'x',
          clientSecret: 'y',
        }).toString(),
      })
      expectError(res, 400, 'unsupported_media_type')
    })
  })

  test('a secret signed with a key Apple does not trust: refused (401), nothing created', async () => {
    const c = await connectApple(p256(), p256())
    const who = relayUser()
    const seen = apple.secrets.length
    const { callback } = await viaApple(new PageClient(server), c.id, who, {
      firstName: 'Nobody',
      lastName: 'Here',
    })
    assert.equal(callback.status, 401, await callback.text())
    assert.match(callback.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(await userByEmail(server, t.tenantId, who.email ?? ''), undefined)
    assert.equal((await identityRows(c.id)).length, 0)
    assert.deepEqual(
      apple.secrets.slice(seen).map((s) => s.accepted),
      [false],
    )
  })

  test('SOCIAL_PROVIDER_ENDPOINTS.apple.audience is the secret’s aud', async () => {
    const audience = 'https://appleid.apple.example'
    const other = await startServer({
      webhookAllowPrivate: true,
      socialProviderEndpoints: { apple: { issuer: apple.url, audience } },
    })
    try {
      const tenant = await createTenant(other)
      const key = p256()
      const fields = { teamId: appleId(), keyId: appleId() }
      const made = await other.request(
        'POST',
        `/v1/${tenant.slug}/social-connections`,
        { provider: 'apple', clientId: 'pending', apple: { ...fields, privateKey: key } },
        { token: tenant.admin.accessToken },
      )
      const { id, callbackUrl } = made.body.connection
      const { clientId } = await apple.addClient(callbackUrl, {
        ...fields,
        privateKeyPem: key,
        audience,
      })
      await other.request(
        'PATCH',
        `/v1/${tenant.slug}/social-connections/${id}`,
        { clientId },
        { token: tenant.admin.accessToken },
      )
      const browser = new PageClient(other)
      const started = await browser.once('GET', `/t/${tenant.slug}/social/${id}`)
      const form = await apple.authorize(started.headers.get('location') ?? '', relayUser())
      const seen = apple.secrets.length
      const callback = await browser.once('POST', form.action.pathname, form.fields)
      assert.equal(callback.status, 303, await callback.text())
      const [secret] = apple.secrets.slice(seen)
      assert.equal(secret.claims.aud, audience)
      assert.equal(secret.accepted, true)
    } finally {
      await other.close()
    }
  })

  test('the secret is minted again when less than an hour of it is left', async () => {
    const c = await connectApple()
    const seen = apple.secrets.length
    const first = await viaApple(new PageClient(server), c.id, relayUser())
    assert.equal(first.callback.status, 303, await first.callback.text())
    server.clock.advance(60)
    const second = await viaApple(new PageClient(server), c.id, relayUser())
    assert.equal(second.callback.status, 303, await second.callback.text())
    server.clock.advance(23 * 60 * 60 + 30 * 60)
    const third = await viaApple(new PageClient(server), c.id, relayUser())
    assert.equal(third.callback.status, 303, await third.callback.text())
    const [a, b, d] = apple.secrets.slice(seen)
    assert.equal(a.claims.iat, b.claims.iat, 'kept while fresh')
    assert.ok((d.claims.iat as number) > (a.claims.iat as number), 'renewed near its end')
    assert.ok([a, b, d].every((s) => s.accepted))
  })
})
