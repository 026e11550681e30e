// The session client and the account lifecycle (CONTRACT §9): signup in a workspace that
// requires a verified address answers no session (and stores none); verifyEmail and
// resetPassword start one from a mailed code.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { setTenant } from '../../test/db.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../test/helpers.ts'
import { SmtpSink } from '../../test/smtp-sink.ts'
import { createSessionClient } from '../src/index.ts'

let sink: SmtpSink
let server: TestServer
let tenant: TenantFixture
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  tenant = await createTenant(server)
})
after(async () => {
  await sink.stop()
})

async function newestCode(email: string, count: number): Promise<string> {
  return sink.codeAfter(email, count)
}

test('signup that requires verification stores no session; verifyEmail then signs in', async () => {
  await setTenant(server, tenant.slug, { requireVerifiedEmail: true })
  try {
    const session = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
    const email = uniqueEmail()
    const answer = await session.signup({ email, password: STRONG_PASSWORD })
    assert.deepEqual(answer, { ok: true, verificationRequired: true })
    assert.equal(await session.getSession(), null)
    const code = await newestCode(email, 0)
    const signedIn = await session.verifyEmail({ email, code })
    assert.equal(signedIn.user.emailVerified, true)
    assert.equal((await session.getSession())?.accessToken, signedIn.accessToken)
    assert.equal((await session.api.getMe()).email, email)
  } finally {
    await setTenant(server, tenant.slug, { requireVerifiedEmail: false })
  }
})

test('requestPasswordReset and resetPassword: the new session is stored', async () => {
  const session = createSessionClient({ baseUrl: server.url, tenant: tenant.slug })
  const email = uniqueEmail()
  const signedUp = await session.signup({ email, password: STRONG_PASSWORD })
  assert.ok('user' in signedUp)
  await server.deps.mailer.drain()
  const count = sink.to(email).length
  assert.deepEqual(await session.requestPasswordReset({ body: { email } }), { ok: true })
  const code = await newestCode(email, count)
  const after = await session.resetPassword({
    email,
    code,
    newPassword: 'quartz-harbor-lantern-58',
  })
  assert.notEqual(after.accessToken, signedUp.accessToken)
  assert.equal((await session.getSession())?.accessToken, after.accessToken)
  assert.equal((await session.api.getMe()).id, signedUp.user.id)
})
