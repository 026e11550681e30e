// The account page's "Set a password" (POST me/password) over real HTTP, as a browser without
// JavaScript uses it: a user whom GitHub signed up (a local stand-in, test/fixtures/social.ts)
// has no password, so the section asks a new password only, never a current one; it is set
// at once after the sign-in, and after "Confirm it's you" once the proof is old (CONTRACT
// §16): the password typed travels sealed through the prompt (never in clear), and the
// prompt offers no password form to an account without one. A refused password and an
// unreadable seal change nothing. Once set, the page changes it instead, it signs in, and
// the last connected account can be removed.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditRows, setTenant, unchanged, userByEmail } from '../db.ts'
import { type GitHubStandIn, startGitHubStandIn } from '../fixtures/social.ts'
import {
  createTenant,
  randomIp,
  startServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'
import { hiddenValue, PageClient, textOf } from './page-client.ts'

let sink: SmtpSink
let github: GitHubStandIn
let server: TestServer
let t: TenantFixture
let connectionId: string

before(async () => {
  sink = await new SmtpSink().start()
  github = await startGitHubStandIn()
  server = await startServer({
    smtpUrl: sink.url,
    webhookAllowPrivate: true,
    socialProviderEndpoints: { github: github.endpoints },
  })
  t = await createTenant(server)
  // Emailed codes on, so "Confirm it's you" has a way for an account without a password.
  await setTenant(server, t.slug, { authPolicy: 'PasswordAndPasswordless' })
  const made = await server.request(
    'POST',
    `/v1/${t.slug}/social-connections`,
    { provider: 'github', ...github.addClient() },
    { token: t.admin.accessToken },
  )
  assert.equal(made.status, 200, JSON.stringify(made.body))
  connectionId = made.body.connection.id
})
after(async () => {
  await server?.close()
  await github?.close()
  await sink?.stop()
})

const NEW_PASSWORD = 'meadow-lantern-quartz-47'
const base = () => `/t/${t.slug}`

/** A browser signed up and in through GitHub, on its account page. */
async function githubBrowser() {
  const email = uniqueEmail('octo')
  const browser = new PageClient(server, randomIp())
  const started = await browser.once('GET', `${base()}/social/${connectionId}`)
  assert.equal(started.status, 303, await started.text())
  const back = await github.authorize(started.headers.get('location') ?? '', {
    id: Math.floor(Math.random() * 1e9),
    login: 'octo',
    emails: [{ email, primary: true, verified: true }],
  })
  const callback = await browser.once('GET', back.pathname + back.search)
  assert.equal(callback.status, 303, await callback.text())
  const account = await browser.get(`${base()}/account`)
  assert.equal(account.status, 200)
  return { email, browser, account }
}

const passwordSet = async (email: string) =>
  (await userByEmail(server, t.tenantId, email))?.passwordHash != null

describe('the account page: a first password', () => {
  test('"Set a password" asks a new password only; it is set, then the page changes it and it signs in', async () => {
    const { email, browser, account } = await githubBrowser()
    assert.match(textOf(account.html), /Set a password/)
    assert.ok(account.html.includes(`action="${base()}/account/password/set"`))
    assert.ok(account.html.includes('name="newPassword"'))
    assert.ok(!account.html.includes('name="currentPassword"'), 'no current password asked')

    const done = await browser.post(`${base()}/account/password/set`, {
      newPassword: NEW_PASSWORD,
    })
    assert.equal(done.status, 200)
    assert.match(done.url, /\/account\?done=password-set$/)
    assert.match(textOf(done.html), /Your password is set/)
    assert.ok(done.html.includes('name="currentPassword"'), 'now the change form')
    assert.ok(!done.html.includes('/account/password/set'))
    assert.equal(await passwordSet(email), true)

    const other = new PageClient(server, randomIp())
    await other.get(`${base()}/sign-in`)
    const signedIn = await other.post(`${base()}/sign-in`, { email, password: NEW_PASSWORD })
    assert.match(signedIn.url, /\/account$/)

    // With a password, the GitHub link is no longer the last way in: Remove works.
    const identities = signedIn.html.match(/\/account\/identities\/([0-9a-f-]+)\/remove/)
    assert.ok(identities, 'a Remove button')
    const removed = await other.post(`${base()}/account/identities/${identities[1]}/remove`, {})
    assert.match(removed.url, /\/account\?done=identity-removed$/)
  })

  test('an old proof: "Confirm it’s you" (no password form; the password sealed), an emailed code, then it is set', async () => {
    const { email, browser } = await githubBrowser()
    server.clock.advance(11 * 60)
    try {
      const prompt = await unchanged(server, t.tenantId, () =>
        browser.post(`${base()}/account/password/set`, { newPassword: NEW_PASSWORD }),
      )
      assert.equal(prompt.status, 200)
      assert.match(textOf(prompt.html), /Before you set a password, confirm it's you/)
      assert.ok(!prompt.html.includes('name="password"'), 'no password to confirm with')
      assert.ok(!prompt.html.includes(NEW_PASSWORD), 'the password is not in the page in clear')
      assert.equal(hiddenValue(prompt.html, 'next'), 'password-set')
      assert.ok(hiddenValue(prompt.html, 'pending'))

      await server.deps.mailer.drain()
      const mails = sink.to(email).length
      const sent = await browser.post(`${base()}/account/confirm`, {
        method: 'send-code',
        next: 'password-set',
        pending: hiddenValue(prompt.html, 'pending') ?? '',
      })
      assert.equal(sent.status, 200)
      const code = await sink.codeAfter(email, mails)
      const done = await browser.post(`${base()}/account/confirm`, {
        method: 'code',
        code,
        next: 'password-set',
        pending: hiddenValue(sent.html, 'pending') ?? '',
      })
      assert.match(done.url, /\/account\?done=password-set$/, textOf(done.html))
      assert.equal(await passwordSet(email), true)
      const user = await userByEmail(server, t.tenantId, email)
      const audit = (await auditRows(server, t.tenantId, 'UserPasswordChanged')).filter(
        (r) => r.userId === user?.id,
      )
      assert.equal(audit.length, 1)
      assert.equal(audit[0].metadata?.via, 'set')
    } finally {
      server.clock.advance(-11 * 60)
    }
  })

  test('a refused password and an unreadable seal change nothing', async () => {
    const { email, browser } = await githubBrowser()
    const refused = await unchanged(server, t.tenantId, () =>
      browser.post(`${base()}/account/password/set`, { newPassword: 'qwerty123456' }),
    )
    assert.equal(refused.status, 400)
    assert.match(refused.html, /id="newPassword-error"/)
    const short = await unchanged(server, t.tenantId, () =>
      browser.post(`${base()}/account/password/set`, { newPassword: 'short' }),
    )
    assert.equal(short.status, 400)
    assert.match(short.html, /id="newPassword-error"/)
    // A seal that is not this browser's (or too old) sets nothing: the form asks again.
    const forged = await unchanged(server, t.tenantId, () =>
      browser.post(`${base()}/account/confirm/continue`, {
        next: 'password-set',
        pending: 'not-a-sealed-value',
      }),
    )
    assert.equal(forged.status, 200)
    assert.match(textOf(forged.html), /Type your new password again/)
    assert.equal(await passwordSet(email), false)
  })
})
