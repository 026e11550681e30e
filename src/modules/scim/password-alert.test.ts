// A password set through SCIM on an existing user is a password change (CONTRACT §9): the
// user gets one security alert (no code, no sign-in link) once it committed; a user created
// with a password gets none (nothing of theirs changed), nor does a refused password.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  PATCH_SCHEMA,
  type ScimTenant,
  scimTenant,
  USER_SCHEMA,
} from '../../../test/fixtures/scim.ts'
import { startTestServer, type TestServer } from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'

let sink: SmtpSink
let server: TestServer
let t: ScimTenant
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await scimTenant(server)
})
after(async () => {
  await sink.stop()
})

async function alertsTo(email: string) {
  await server.deps.mailer.drain()
  return sink.to(email).filter((m) => m.subject.startsWith('Security alert:'))
}

test('a password set by PUT or PATCH on an existing user mails one security alert; creation and refusals mail none', async () => {
  const email = 'alerted@example.com'
  const created = await t.scim('POST', '/Users', {
    schemas: [USER_SCHEMA],
    userName: email,
    password: 'first-provisioned-Secret-1',
  })
  assert.equal(created.status, 201)
  assert.equal((await alertsTo(email)).length, 0, 'no alert for a new user')

  const weak = await t.scim('PATCH', `/Users/${created.body.id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'replace', path: 'password', value: email }],
  })
  assert.equal(weak.status, 400)
  assert.equal((await alertsTo(email)).length, 0, 'no alert for a refused password')

  const put = await t.scim('PUT', `/Users/${created.body.id}`, {
    schemas: [USER_SCHEMA],
    userName: email,
    password: 'second-provisioned-Secret-2',
  })
  assert.equal(put.status, 200)
  const [alert] = await alertsTo(email)
  assert.match(alert.subject, /^Security alert: your password was changed/)
  assert.doesNotMatch(alert.text, /\d{6}/)

  const patched = await t.scim('PATCH', `/Users/${created.body.id}`, {
    schemas: [PATCH_SCHEMA],
    Operations: [{ op: 'Replace', path: 'password', value: 'third-provisioned-Secret-3' }],
  })
  assert.equal(patched.status, 200)
  assert.equal((await alertsTo(email)).length, 2)
})
