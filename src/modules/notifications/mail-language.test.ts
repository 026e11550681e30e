// The language of mails (CONTRACT §20), through the SMTP sink: the recipient's `locale`,
// else the requesting page's (Accept-Language), else the tenant's `defaultLocale`, among
// the tenant's `locales`; a de or fr mail holds no English string of the catalogue; a
// security alert's subject keeps its `Security alert:` prefix in every language.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { type ReceivedMail, SmtpSink } from '../../../test/smtp-sink.ts'
import { catalogues } from '../../i18n/index.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

/** The literal parts (8 characters or more) of the English mail messages another locale words differently. */
function englishFragments(locale: string): string[] {
  const en = catalogues.get('en') ?? {}
  const other = catalogues.get(locale) ?? {}
  return Object.entries(en)
    .filter(([key, message]) => key.startsWith('mail.') && other[key] !== message)
    .flatMap(([, message]) => message.split(/\{[^{}]*\}|\{|\}/))
    .map((part) => part.trim())
    .filter((part) => part.length >= 8)
}

function assertNoEnglish(mail: ReceivedMail, locale: string) {
  const fragments = englishFragments(locale)
  assert.ok(fragments.length > 30, 'the check has strings to look for')
  // The alert's fixed prefix is English by design (CONTRACT §20).
  const subject = mail.subject.replace(/^Security alert: /, '')
  for (const part of [subject, mail.text, mail.html]) {
    const left = fragments.filter((f) => part.includes(f))
    assert.deepEqual(left, [], `${locale}: ${mail.subject}`)
  }
}

async function mailsTo(email: string): Promise<ReceivedMail[]> {
  await server.deps.mailer.drain()
  return sink.to(email)
}

const requestReset = (t: TenantFixture, email: string, language?: string) =>
  server.request(
    'POST',
    `/v1/${t.slug}/auth/request-password-reset`,
    { email },
    { ip: randomIp(), headers: language ? { 'accept-language': language } : {} },
  )

test('a de user gets German mails (a reset code, a security alert), whatever the request’s language', async () => {
  const t = await createTenant(server)
  const user = await signup(server, t.slug, uniqueEmail('de'))
  await server.request('PATCH', `/v1/${t.slug}/me`, { locale: 'de' }, { token: user.accessToken })
  assert.equal((await requestReset(t, user.email, 'fr')).status, 200)
  const changed = await server.request(
    'PATCH',
    `/v1/${t.slug}/me/password`,
    { currentPassword: user.password, newPassword: 'quartz-harbor-lantern-58' },
    { token: user.accessToken, ip: randomIp() },
  )
  assert.equal(changed.status, 200, JSON.stringify(changed.body))
  const mails = await mailsTo(user.email)
  const reset = mails.find((m) => m.subject.startsWith('Ihr Code zum Zurücksetzen'))
  assert.ok(reset, mails.map((m) => m.subject).join(' | '))
  assert.match(reset.text, /^Ihr Code: \d{6}$/m, 'the code as a standalone number')
  assertNoEnglish(reset, 'de')
  const alert = mails.find((m) => m.subject.startsWith('Security alert:'))
  assert.ok(alert)
  assert.equal(alert.subject, `Security alert: Ihr Passwort wurde geändert (${`Tenant ${t.slug}`})`)
  assert.match(alert.text, /Das Passwort Ihres Kontos wurde geändert\./)
  assertNoEnglish(alert, 'de')
})

test('without a locale: the requesting page’s language, else the tenant’s default', async () => {
  const t = await createTenant(server)
  const a = await signup(server, t.slug, uniqueEmail('fr'))
  await requestReset(t, a.email, 'fr-CA, en;q=0.5')
  const [french] = await mailsTo(a.email)
  assert.match(french?.subject ?? '', /^Votre code de réinitialisation/)
  assertNoEnglish(french as ReceivedMail, 'fr')

  // No header: English, the default; then the tenant's default becomes German.
  const b = await signup(server, t.slug, uniqueEmail('plain'))
  await requestReset(t, b.email)
  assert.match((await mailsTo(b.email))[0]?.subject ?? '', /^Your password reset code for /)
  await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { defaultLocale: 'de' },
    { token: t.admin.accessToken },
  )
  const c = await signup(server, t.slug, uniqueEmail('plain'))
  await requestReset(t, c.email, 'sw')
  const german = (await mailsTo(c.email))[0]
  assert.match(german?.subject ?? '', /^Ihr Code zum Zurücksetzen/)
  assertNoEnglish(german as ReceivedMail, 'de')
})

test('an invitation in the inviting page’s language, in French with no English left', async () => {
  const t = await createTenant(server)
  const email = uniqueEmail('invitee')
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/invites`,
    { email, role: 'Admin' },
    { token: t.admin.accessToken, headers: { 'accept-language': 'fr' } },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const [invite] = await mailsTo(email)
  assert.ok(invite)
  assert.equal(invite.subject, `Vous êtes invité à rejoindre Tenant ${t.slug}`)
  assert.match(invite.text, /en tant qu’administrateur/)
  assert.ok(invite.text.includes(res.body.token), 'the token is there')
  assertNoEnglish(invite, 'fr')
})

test('a locale the tenant does not offer is not used: its default is', async () => {
  const t = await createTenant(server)
  const user = await signup(server, t.slug, uniqueEmail('de'))
  await server.request('PATCH', `/v1/${t.slug}/me`, { locale: 'de' }, { token: user.accessToken })
  await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { locales: ['en', 'fr'], defaultLocale: 'fr' },
    { token: t.admin.accessToken },
  )
  await requestReset(t, user.email, 'de')
  const [mail] = await mailsTo(user.email)
  assert.match(mail?.subject ?? '', /^Votre code de réinitialisation/)
})
