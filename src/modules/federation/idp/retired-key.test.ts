// An IdP client secret sealed under a key no longer in ENCRYPTION_KEYS (retired before
// `npm run rotate-keys` re-sealed it) cannot be opened: hosted sign-in answers 400
// idp_not_configured, telling the admin to store the credentials again, never a 500.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { expectError } from '../../../../test/envelope.ts'
import { startWithProvider } from '../../../../test/fixtures/oauth.ts'
import { createTenant, type TestServer } from '../../../../test/helpers.ts'
import type { OidcProviderFixture } from '../../../../test/oidc-provider.ts'
import { eq } from '../../../db/orm.ts'
import { tenants } from '../../../db/schema.ts'
import { FieldCipher } from '../../../lib/crypto.ts'
import { secretAad } from './service.ts'

let server: TestServer
let idp: OidcProviderFixture
before(async () => {
  ;({ server, idp } = await startWithProvider())
})
after(async () => {
  await server.close()
  await idp.close()
})

test('a secret sealed under a retired key: start and callback answer 400 idp_not_configured', async () => {
  const t = await createTenant(server)
  const put = await server.request(
    'PUT',
    `/v1/${t.slug}/oauth/idp/credentials`,
    { clientId: 'client-one', clientSecret: 'a-secret' },
    { token: t.admin.accessToken },
  )
  assert.equal(put.status, 200)
  // What a retired key leaves behind: sealed under a version this service does not hold.
  const retired = new FieldCipher([{ version: 'v0', key: Buffer.alloc(32, 9) }])
  await server.deps.db
    .update(tenants)
    .set({ idpClientSecretEnc: retired.encrypt('a-secret', secretAad(t.tenantId)) })
    .where(eq(tenants.id, t.tenantId))

  const start = await server.request('GET', `/v1/${t.slug}/oauth/idp/start`)
  expectError(start, 400, 'idp_not_configured')
  assert.match(start.body.message, /store them again/)
  const callback = await server.request(
    'GET',
    `/v1/${t.slug}/oauth/idp/callback?code=abc&state=def`,
  )
  expectError(callback, 400, 'idp_not_configured')
})
