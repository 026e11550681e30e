// Tenant setting passkeysEnabled (CONTRACT §9): when false, the registration and sign-in
// routes answer 403 passkeys_disabled and change nothing; listing and removing still work,
// and turning it back on makes the stored passkeys sign in again.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import { registerPasskey, signInOptions } from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
})

const setEnabled = async (passkeysEnabled: boolean) => {
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { passkeysEnabled },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.passkeysEnabled, passkeysEnabled)
}

test('passkeysEnabled false: 403 on the four ceremony routes; list and remove still work', async () => {
  const user = await signup(server, t.slug)
  const token = user.accessToken as string
  const kept = await registerPasskey(server, t.slug, token)
  const removed = await registerPasskey(server, t.slug, token)
  // Prepared while passkeys were on, presented once they are off.
  const regOptions = await server.request(
    'POST',
    `/v1/${t.slug}/me/passkeys/registration-options`,
    undefined,
    { token },
  )
  const signIn = await signInOptions(server, t.slug, user.email)
  await setEnabled(false)
  const config = await server.request('GET', `/v1/${t.slug}/auth/config`)
  assert.equal(config.body.passkeysEnabled, false)

  const refused: [string, string, unknown, string | undefined][] = [
    ['POST', 'me/passkeys/registration-options', undefined, token],
    ['POST', 'me/passkeys', { response: kept.authenticator.create(regOptions.body) }, token],
    ['POST', 'auth/passkey/options', {}, undefined],
    ['POST', 'auth/passkey/options', { email: user.email }, undefined],
    ['POST', 'auth/passkey/verify', { response: kept.authenticator.get(signIn) }, undefined],
  ]
  for (const [method, path, body, auth] of refused) {
    const res = await unchanged(server, t.tenantId, () =>
      server.request(method, `/v1/${t.slug}/${path}`, body, { token: auth }),
    )
    expectError(res, 403, 'passkeys_disabled')
  }

  const listed = await server.request('GET', `/v1/${t.slug}/me/passkeys`, undefined, { token })
  assert.equal(listed.status, 200)
  assert.equal(listed.body.items.length, 2)
  const gone = await server.request(
    'DELETE',
    `/v1/${t.slug}/me/passkeys/${removed.passkey.id}`,
    undefined,
    { token },
  )
  assert.deepEqual(gone.body, { ok: true })

  // On again: the challenge prepared before is still good, the passkey signs in.
  await setEnabled(true)
  const res = await server.request('POST', `/v1/${t.slug}/auth/passkey/verify`, {
    response: kept.authenticator.get(signIn),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
})
