// Security notifications (CONTRACT §9): a mail whose subject begins `Security alert:`,
// holding no 6-digit number and no link that signs in, when the password changes, TOTP is
// enrolled or removed, a recovery code is used or the codes regenerated, and when a
// sign-in comes from a new device (browser and OS family, /24 or /48 network) not seen on
// a session of the user in 90 days, never for the first session. Tenant setting
// securityNotifications false: none. Each alert is mailed only once its change committed.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { setTenant } from '../../../test/db.ts'
import { enrolWithRecoveryCodes, totpAt } from '../../../test/fixtures/mfa.ts'
import { mailedLoginCode, tenantWith } from '../../../test/fixtures/passwordless.ts'
import {
  from,
  UA_CHROME_LINUX,
  UA_FIREFOX_LINUX,
  UA_FIREFOX_LINUX_NEWER,
  UA_SAFARI_IOS,
} from '../../../test/fixtures/sessions.ts'
import {
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { type ReceivedMail, SmtpSink } from '../../../test/smtp-sink.ts'
import { eq, sql } from '../../db/orm.ts'
import { sessions } from '../../db/schema.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const DAY = 24 * 3600
const HOME = from('10.20.30.40', UA_FIREFOX_LINUX)

/** The security alerts `email` received, once every queued mail has landed. */
async function alertsTo(email: string): Promise<ReceivedMail[]> {
  await server.deps.mailer.drain()
  return sink.to(email).filter((m) => m.subject.startsWith('Security alert:'))
}

/** What every alert must be: no code, no link but the account page's. */
function assertHarmless(mail: ReceivedMail, slug: string) {
  assert.match(mail.subject, /^Security alert: /)
  for (const body of [mail.text, mail.html]) {
    assert.doesNotMatch(body, /\d{6}/, 'no 6-digit number')
    const links = body.match(/https?:\/\/[^\s"<]+/g) ?? []
    // The account page's link, unless the slug holds six digits in a row (then the line is
    // left out: random test slugs sometimes do).
    const expected = /\d{6}/.test(slug) ? [] : [`http://auth.test/t/${slug}/account`]
    assert.deepEqual([...new Set(links)], expected)
  }
}

/** A tenant (named without digits) with the given policies and a member signed up from HOME. */
async function memberAtHome(policy: Parameters<typeof tenantWith>[1] = {}) {
  const t = await tenantWith(server, { name: 'Acme Alerts', ...policy })
  const email = uniqueEmail('alerted')
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/auth/signup`,
    { email, password: STRONG_PASSWORD },
    HOME,
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { t, email, id: res.body.user.id as string, token: res.body.accessToken as string }
}

const loginFrom = (
  t: TenantFixture,
  email: string,
  options: ReturnType<typeof from>,
  extra: Record<string, unknown> = {},
) =>
  server.request(
    'POST',
    `/v1/${t.slug}/auth/login`,
    { email, password: STRONG_PASSWORD, ...extra },
    options,
  )

async function signIn(t: TenantFixture, email: string, options: ReturnType<typeof from>) {
  const res = await loginFrom(t, email, options)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body as { accessToken: string; refreshToken: string }
}

describe('alerts about changes to how the account signs in', () => {
  test('password changed (PATCH me/password)', async () => {
    const { t, email, token } = await memberAtHome()
    const res = await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: STRONG_PASSWORD, newPassword: 'amber-meadow-violin-42' },
      { token, ...HOME },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const alerts = await alertsTo(email)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      ['Security alert: your password was changed (Acme Alerts)'],
    )
    assertHarmless(alerts[0], t.slug)
    assert.match(alerts[0].text, /Network address: 10\.20\.30\.40/)
    assert.match(alerts[0].text, /Browser: Firefox on Linux/)
    // A wrong current password changes nothing and mails nothing.
    await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: 'not-it-at-all', newPassword: 'quartz-harbor-lantern-58' },
      { token, ...HOME },
    )
    assert.equal((await alertsTo(email)).length, 1)
  })

  test('a workspace whose name and slug hold 6-digit numbers: the lines naming them are left out', async () => {
    const slug = `shop-123456-${Math.random().toString(36).slice(2, 8).replace(/\d/g, 'x')}`
    const created = await server.request('POST', '/v1/tenants', {
      tenant: { slug, name: 'Shop 987654' },
      admin: { email: uniqueEmail('shop'), password: STRONG_PASSWORD },
    })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const res = await server.request(
      'PATCH',
      `/v1/${slug}/me/password`,
      { currentPassword: STRONG_PASSWORD, newPassword: 'amber-meadow-violin-42' },
      { token: created.body.accessToken, ...HOME },
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const [alert] = await alertsTo(created.body.user.email)
    assert.ok(alert, 'the alert is still sent')
    for (const body of [alert.text, alert.html]) assert.doesNotMatch(body, /\d{6}/)
    assert.match(alert.text, /The password of your account was changed\./)
    assert.match(alert.text, /Network address: 10\.20\.30\.40/)
  })

  test('TOTP enrolled (mfa/totp/verify), then recovery codes regenerated and one used', async () => {
    const { t, email, token } = await memberAtHome({ mfaPolicy: 'Optional' })
    const { secret, recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, token)
    let alerts = await alertsTo(email)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      ['Security alert: an authenticator app was added (Acme Alerts)'],
    )
    const regenerated = await server.request(
      'POST',
      `/v1/${t.slug}/mfa/recovery-codes/regenerate`,
      { totpCode: totpAt(server, secret) },
      { token, ...HOME },
    )
    assert.equal(regenerated.status, 200)
    // A wrong recovery code mails nothing; the right one, from home, one alert.
    await loginFrom(t, email, HOME, { recoveryCode: recoveryCodes[0] })
    const used = await loginFrom(t, email, HOME, {
      recoveryCode: regenerated.body.recoveryCodes[0],
    })
    assert.equal(used.status, 200, JSON.stringify(used.body))
    alerts = await alertsTo(email)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      [
        'Security alert: an authenticator app was added (Acme Alerts)',
        'Security alert: new recovery codes were made (Acme Alerts)',
        'Security alert: a recovery code was used (Acme Alerts)',
      ],
    )
    for (const mail of alerts) assertHarmless(mail, t.slug)
    assert.match(alerts[2].text, /Recovery codes left: 9 of 10\./)
  })

  test('TOTP enrolled before the first sign-in (auth/totp/initial-verify)', async () => {
    const { t, email } = await memberAtHome({ mfaPolicy: 'Required' })
    const begun = await server.request(
      'POST',
      `/v1/${t.slug}/auth/totp/initial-enroll`,
      { email, password: STRONG_PASSWORD },
      HOME,
    )
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/auth/totp/initial-verify`,
      { email, password: STRONG_PASSWORD, code: totpAt(server, begun.body.secret) },
      HOME,
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const alerts = await alertsTo(email)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      ['Security alert: an authenticator app was added (Acme Alerts)'],
    )
    assertHarmless(alerts[0], t.slug)
  })

  test('TOTP removed by an admin reset: the user is told, not where the admin was', async () => {
    const { t, email, id, token } = await memberAtHome({ mfaPolicy: 'Optional' })
    await enrolWithRecoveryCodes(server, t.slug, token)
    const before = (await alertsTo(email)).length
    const res = await server.request('POST', `/v1/${t.slug}/users/${id}/totp/disable`, undefined, {
      token: t.admin.accessToken,
      ...from('192.0.2.10', UA_CHROME_LINUX),
    })
    assert.equal(res.status, 200)
    const alerts = (await alertsTo(email)).slice(before)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      ['Security alert: your authenticator app was removed (Acme Alerts)'],
    )
    assertHarmless(alerts[0], t.slug)
    assert.doesNotMatch(alerts[0].text, /192\.0\.2\.10|Chrome/)
    assert.match(alerts[0].text, /An administrator of the workspace reset it/)
    // Nothing left to remove: no second alert.
    await server.request('POST', `/v1/${t.slug}/users/${id}/totp/disable`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal((await alertsTo(email)).length, before + 1)
  })

  test('securityNotifications false: none of them is sent', async () => {
    const { t, email, id, token } = await memberAtHome({ mfaPolicy: 'Optional' })
    await setTenant(server, t.slug, { securityNotifications: false })
    const { secret, recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, token)
    await server.request(
      'POST',
      `/v1/${t.slug}/mfa/recovery-codes/regenerate`,
      { totpCode: totpAt(server, secret) },
      { token },
    )
    const away = await loginFrom(t, email, from('198.51.100.1', UA_SAFARI_IOS), {
      recoveryCode: recoveryCodes[0],
    })
    assert.equal(away.status, 401, 'the regenerated codes replaced it')
    const fresh = await loginFrom(t, email, from('198.51.100.1', UA_SAFARI_IOS), {
      totpCode: totpAt(server, secret, 1),
    })
    assert.equal(fresh.status, 200, JSON.stringify(fresh.body))
    const passwordChanged = await server.request(
      'PATCH',
      `/v1/${t.slug}/me/password`,
      { currentPassword: STRONG_PASSWORD, newPassword: 'amber-meadow-violin-42' },
      { token },
    )
    assert.equal(passwordChanged.status, 200)
    await server.request('POST', `/v1/${t.slug}/users/${id}/totp/disable`, undefined, {
      token: t.admin.accessToken,
    })
    assert.deepEqual(await alertsTo(email), [])
  })
})

describe('a sign-in from a new device', () => {
  test('the same browser family on the same /24: none (a browser update is not a new device)', async () => {
    const { t, email } = await memberAtHome()
    await signIn(t, email, from('10.20.30.99', UA_FIREFOX_LINUX))
    await signIn(t, email, from('10.20.30.41', UA_FIREFOX_LINUX_NEWER))
    assert.deepEqual(await alertsTo(email), [])
  })

  test('another browser family on the same network: one alert naming it', async () => {
    const { t, email } = await memberAtHome()
    await signIn(t, email, from('10.20.30.40', UA_CHROME_LINUX))
    const alerts = await alertsTo(email)
    assert.deepEqual(
      alerts.map((m) => m.subject),
      ['Security alert: a sign-in from a new device (Acme Alerts)'],
    )
    assertHarmless(alerts[0], t.slug)
    assert.match(alerts[0].text, /Browser: Chrome on Linux/)
    assert.match(alerts[0].text, /Network address: 10\.20\.30\.40/)
    // Known from now on.
    await signIn(t, email, from('10.20.30.7', UA_CHROME_LINUX))
    assert.equal((await alertsTo(email)).length, 1)
  })

  test('the same browser from another /24: one alert', async () => {
    const { t, email } = await memberAtHome()
    await signIn(t, email, from('10.20.31.40', UA_FIREFOX_LINUX))
    assert.equal((await alertsTo(email)).length, 1)
  })

  test('IPv6 networks are /48s', async () => {
    const { t, email } = await memberAtHome()
    const v6 = (ip: string) => from(ip, UA_SAFARI_IOS)
    await signIn(t, email, v6('2001:db8:1:1::1'))
    assert.equal((await alertsTo(email)).length, 1, 'a new device at first')
    await signIn(t, email, v6('2001:db8:1:ffff:abcd::9'))
    assert.equal((await alertsTo(email)).length, 1, 'the same /48')
    await signIn(t, email, v6('2001:db8:2::1'))
    assert.equal((await alertsTo(email)).length, 2, 'another /48')
  })

  test('never for the first session: sign-up, or the first sign-in of a passwordless newcomer', async () => {
    const { email } = await memberAtHome()
    assert.deepEqual(await alertsTo(email), [])
    const t = await tenantWith(server, {
      authPolicy: 'PasswordAndPasswordless',
      passwordlessJitSignup: true,
    })
    const newcomer = uniqueEmail('jit')
    const code = await mailedLoginCode(server, sink, t.slug, newcomer)
    const res = await server.request(
      'POST',
      `/v1/${t.slug}/auth/verify-login-code`,
      { email: newcomer, code },
      from('203.0.113.5', UA_CHROME_LINUX),
    )
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(await alertsTo(newcomer), [])
    // Their second sign-in, from elsewhere, is from a new device.
    const again = await mailedLoginCode(server, sink, t.slug, newcomer)
    const second = await server.request(
      'POST',
      `/v1/${t.slug}/auth/verify-login-code`,
      { email: newcomer, code: again },
      from('198.51.100.5', UA_SAFARI_IOS),
    )
    assert.equal(second.status, 200)
    assert.equal((await alertsTo(newcomer)).length, 1)
  })

  test('sessions last used more than 90 days ago do not count; one used since does', async () => {
    const { t, email } = await memberAtHome()
    server.clock.advance(91 * DAY)
    await signIn(t, email, HOME)
    assert.equal((await alertsTo(email)).length, 1, 'home was last seen 91 days ago')

    // A session kept alive by refreshes stays known, however old its sign-in.
    const { t: t2, email: email2 } = await memberAtHome()
    let { refreshToken } = await signIn(t2, email2, HOME)
    for (let i = 0; i < 4; i++) {
      server.clock.advance(25 * DAY)
      const res = await server.request(
        'POST',
        `/v1/${t2.slug}/auth/refresh`,
        { refreshToken },
        HOME,
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
      refreshToken = res.body.refreshToken
    }
    server.clock.advance(25 * DAY) // the sign-in 125 days ago, the last refresh 25
    await signIn(t2, email2, HOME)
    assert.deepEqual(await alertsTo(email2), [])
  })

  test('among many devices, each one seen is known and an unseen one alerts', async () => {
    const { t, email, id } = await memberAtHome()
    // Sessions from 40 other networks, and one with neither address nor agent (sorted
    // first in the walk), inserted as sign-ins would have left them: the check walks
    // every pair, not the first few.
    const now = new Date(server.clock.now().getTime())
    const expiresAt = new Date(now.getTime() + 30 * DAY * 1000)
    await server.deps.db.insert(sessions).values([
      ...Array.from({ length: 40 }, (_, i) => ({
        tenantId: t.tenantId,
        id: crypto.randomUUID(),
        userId: id,
        createdAt: now,
        expiresAt,
        ip: `192.0.${i}.9`,
        userAgent: i % 2 ? UA_SAFARI_IOS : UA_CHROME_LINUX,
      })),
      { tenantId: t.tenantId, id: crypto.randomUUID(), userId: id, createdAt: now, expiresAt },
    ])
    await signIn(t, email, from('192.0.23.200', UA_SAFARI_IOS))
    await signIn(t, email, from('192.0.38.1', UA_CHROME_LINUX))
    await signIn(t, email, HOME)
    assert.deepEqual(await alertsTo(email), [], 'every one of them was seen')
    await signIn(t, email, from('192.0.23.200', UA_CHROME_LINUX))
    assert.equal((await alertsTo(email)).length, 1, 'Chrome was never seen on 192.0.23.0/24')
  })

  test('a returning user whose sessions were all purged is not on a first session', async () => {
    const { t, email, id } = await memberAtHome()
    server.clock.advance(200 * DAY)
    // What `npm run purge` does to the rows of sessions that ended long ago (done for this
    // user only: the database may be shared with test files running meanwhile).
    await server.deps.db.delete(sessions).where(eq(sessions.userId, id))
    const [{ n }] = await server.deps.db
      .select({ n: sql<number>`count(*)::int` })
      .from(sessions)
      .where(eq(sessions.userId, id))
    assert.equal(n, 0)
    await signIn(t, email, HOME)
    assert.equal((await alertsTo(email)).length, 1)
  })

  test('a failed sign-in mails nothing; of two parallel sign-ins with one recovery code only the winner does', async () => {
    const { t, email, token } = await memberAtHome({ mfaPolicy: 'Optional' })
    const { recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, token)
    const before = (await alertsTo(email)).length
    const away = from('198.51.100.77', UA_SAFARI_IOS)
    await server.request(
      'POST',
      `/v1/${t.slug}/auth/login`,
      { email, password: 'not-the-password' },
      away,
    )
    assert.equal((await alertsTo(email)).length, before)
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        loginFrom(t, email, away, { recoveryCode: recoveryCodes[0] }),
      ),
    )
    assert.equal(answers.filter((r) => r.status === 200).length, 1)
    const alerts = (await alertsTo(email)).slice(before)
    assert.deepEqual(alerts.map((m) => m.subject).sort(), [
      'Security alert: a recovery code was used (Acme Alerts)',
      'Security alert: a sign-in from a new device (Acme Alerts)',
    ])
  })

  test('securityNotifications false: no new-device alert', async () => {
    const { t, email } = await memberAtHome()
    await setTenant(server, t.slug, { securityNotifications: false })
    await signIn(t, email, from('198.51.100.8', UA_CHROME_LINUX))
    assert.deepEqual(await alertsTo(email), [])
  })
})
