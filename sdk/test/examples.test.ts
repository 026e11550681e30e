// examples/backend.ts run as its own process against the real service (ES256 through the
// JWKS): a signed-in user's session fetch reaches the protected route; no token is 401.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { test } from 'node:test'
import { privateKeyPem } from '../../test/fixtures/signing-keys.ts'
import { createTenant, STRONG_PASSWORD, startTestServer, uniqueEmail } from '../../test/helpers.ts'
import { createSessionClient } from '../src/index.ts'

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'backend.ts')

test('examples/backend.ts protects /api/profile with the SDK verifier', async (t) => {
  const server = await startTestServer(t, {
    jwtAlg: 'ES256',
    jwtPrivateKeys: [privateKeyPem('ES256')],
  })
  const tenant = await createTenant(server)
  const child = spawn(process.execPath, [EXAMPLE], {
    env: {
      ...process.env,
      PORT: '0',
      AUTH_ISSUER: 'http://auth.test',
      AUTH_TENANT_ID: tenant.tenantId,
      AUTH_JWKS_URL: `${server.url}/.well-known/jwks.json`,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  t.after(() => child.kill())
  let output = ''
  child.stdout.setEncoding('utf8')
  const backend = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk
      const match = /backend listening on (\S+)/.exec(output)
      if (match) resolve(match[1])
    })
    child.once('exit', (code) => reject(new Error(`the example exited with ${code}: ${output}`)))
  })

  const session = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
  const signedUp = await session.signup({ email: uniqueEmail(), password: STRONG_PASSWORD })
  assert.ok('user' in signedUp)
  const { user } = signedUp
  const res = await session.fetch(`${backend}/api/profile`)
  assert.equal(res.status, 200)
  assert.deepEqual(await res.json(), { userId: user.id, tenantId: tenant.tenantId, role: 'Member' })

  const anonymous = await fetch(`${backend}/api/profile`)
  assert.equal(anonymous.status, 401)
  assert.equal((await anonymous.json()).details.reason, 'token_invalid')

  child.kill('SIGTERM')
  await once(child, 'exit')
})
