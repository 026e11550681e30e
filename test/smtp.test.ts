import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { Mailer } from '../src/lib/mailer.ts'
import { SmtpSink } from './smtp-sink.ts'

let sink: SmtpSink
before(async () => {
  sink = await new SmtpSink().start()
})
after(() => sink.stop())

test('the mailer delivers over real SMTP and the sink reads the code back', async () => {
  const logged: unknown[] = []
  const log = { info: (o: object) => logged.push(o), error: (o: object) => logged.push(o) }
  const mailer = new Mailer({ smtpUrl: sink.url, from: 'auth@test.local', log })
  mailer.deliver({
    to: 'Someone@Example.com',
    subject: 'Your code',
    text: 'Code: 123456',
    html: '<p>123456</p>',
  })
  await mailer.drain()
  const mail = await sink.waitFor('someone@example.com')
  assert.equal(SmtpSink.code(mail), '123456')
  assert.equal(logged.length, 0)
})
