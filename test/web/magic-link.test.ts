// CONTRACT §20, magic links: with the tenant's `passwordlessMethod` `link` (or `both`, when
// the person chooses it) the hosted pages mail a link that signs in only the browser that
// asked, once, within 15 minutes; opened in another browser it shows the code to type where
// the sign-in began, and signs that browser in never. Through the real pages (a browser
// without JavaScript keeping its cookies), the real SMTP sink and the database.
import assert from 'node:assert/strict'
import type { ServerResponse } from 'node:http'
import { after, before, describe, type TestContext, test } from 'node:test'
import { setUser, tenantSnapshot } from '../db.ts'
import { expectValidation } from '../envelope.ts'
import { receiver } from '../fixtures/webhooks.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'
import { hiddenValue, PageClient, textOf } from './page-client.ts'

let server: TestServer
let sink: SmtpSink

before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url, webhookAllowPrivate: true })
})
after(() => sink.stop())

const browser = () => new PageClient(server, randomIp())

async function tenantWith(passwordlessMethod: string, extra: Record<string, unknown> = {}) {
  const t = await createTenant(server)
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { authPolicy: 'PasswordAndPasswordless', passwordlessMethod, ...extra },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.passwordlessMethod, passwordlessMethod)
  server.deps.tenants.forget(t.slug)
  return t
}

/** Asks for a link in `c` for `email`; the page it lands on. */
async function askForLink(c: PageClient, t: TenantFixture, email: string, method?: string) {
  await c.get(`/t/${t.slug}/sign-in/code`)
  return c.post(`/t/${t.slug}/sign-in/code`, { email, ...(method ? { method } : {}) })
}

const LINK = /https?:\/\/\S+\/magic-link\?token=[^\s"<]+/

/**
 * The path of the link of the first mail to `email` after its first `after` that holds one,
 * waiting for it (a security alert about a new device may land in between).
 */
async function linkAfter(email: string, after: number): Promise<string> {
  const until = Date.now() + 5000
  for (;;) {
    const url = sink
      .to(email)
      .slice(after)
      .map((m) => LINK.exec(m.text)?.[0])
      .find(Boolean)
    if (url) {
      const { pathname, search } = new URL(url)
      return `${pathname}${search}`
    }
    assert.ok(Date.now() < until, `no link for ${email}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const signedIn = (c: PageClient) => [...c.cookies.keys()].some((k) => k.includes('ta_session'))

describe('magic links: the setting', () => {
  test('passwordlessMethod is code by default, and link and both are taken', async () => {
    const t = await createTenant(server)
    const got = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(got.body.passwordlessMethod, 'code')
    for (const method of ['link', 'both', 'code']) {
      const res = await server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { passwordlessMethod: method },
        { token: t.admin.accessToken },
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
      assert.equal(res.body.passwordlessMethod, method)
    }
  })

  test('bad input: an unknown method, or one of the wrong type, is 400 validation and changes nothing', async () => {
    const t = await tenantWith('link')
    const before = await tenantSnapshot(server, t.tenantId)
    for (const value of ['sms', 'LINK', '', 1, null, ['link']]) {
      const res = await server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { passwordlessMethod: value },
        { token: t.admin.accessToken },
      )
      expectValidation(res, 'body.passwordlessMethod')
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })
})

describe('magic links: the hosted pages', () => {
  test('the link signs in the browser that asked, once: a second opening is refused', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('magic'))
    const c = browser()
    const request = await c.get(`/t/${t.slug}/sign-in/code`)
    assert.match(textOf(request.html), /Sign in with an emailed link/)
    assert.match(request.html, /<button type="submit" class="primary">Email me a link<\/button>/)
    const before = sink.to(user.email).length
    const sent = await c.post(`/t/${t.slug}/sign-in/code`, { email: user.email })
    assert.equal(sent.status, 200)
    assert.match(textOf(sent.html), /we sent it a sign-in link/)
    assert.ok(hiddenValue(sent.html, 'pending'), 'the form for the code a link shows elsewhere')
    const link = await linkAfter(user.email, before)
    const mail = sink.to(user.email).find((m) => m.text.includes(link)) as {
      subject: string
      text: string
    }
    assert.equal(mail.subject, `Your sign-in link for Tenant ${t.slug}`)
    assert.match(mail.text, /expires in 15 minutes/)

    const opened = await c.get(link)
    assert.match(opened.url, /\/account$/, textOf(opened.html))
    assert.ok(signedIn(c))
    const logins = await server.request('GET', `/v1/${t.slug}/audit?action=UserLogin`, undefined, {
      token: t.admin.accessToken,
    })
    assert.ok(
      logins.body.items.some((e: { userId: string }) => e.userId === user.user.id),
      'UserLogin recorded',
    )

    const again = await browser().get(link)
    assert.equal(again.status, 400)
    assert.match(textOf(again.html), /This link no longer works/)
    const reused = await c.get(link)
    assert.equal(reused.status, 400)
    assert.match(textOf(reused.html), /This link no longer works/)
  })

  test('opened in another browser it shows the code and signs nobody in; the code signs in where it began', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('elsewhere'))
    const asking = browser()
    const before = sink.to(user.email).length
    const sent = await askForLink(asking, t, user.email)
    const link = await linkAfter(user.email, before)

    const other = browser()
    const shown = await other.get(link)
    assert.equal(shown.status, 200)
    assert.match(textOf(shown.html), /asked for in another browser/)
    const code = /<strong>(\d{6})<\/strong>/.exec(shown.html)?.[1]
    assert.ok(code, 'the code shown')
    assert.equal(signedIn(other), false, 'the other browser is not signed in')
    // Shown again, it is the same code, and opening it counted no wrong guess.
    assert.ok((await other.get(link)).html.includes(code))

    const typed = await asking.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(sent.html, 'pending') ?? '',
      code,
    })
    assert.match(typed.url, /\/account$/, textOf(typed.html))
    assert.ok(signedIn(asking))
    assert.equal(signedIn(other), false)
    // Spent: neither browser gets anything from the link now.
    assert.equal((await other.get(link)).status, 400)
  })

  test('a wrong code typed after a link stays on the link page, with the error by the field', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('wrong'))
    const c = browser()
    const sent = await askForLink(c, t, user.email)
    const page = await c.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(sent.html, 'pending') ?? '',
      code: '000000',
    })
    assert.equal(page.status, 401)
    assert.match(page.html, /id="code-error"[^>]*>That code is wrong/)
    assert.match(textOf(page.html), /we sent it a sign-in link/)
    assert.equal(signedIn(c), false)
  })

  test('the link works for 15 minutes, not the 10 of a code, and not after', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('late'))
    const c = browser()
    let before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const early = await linkAfter(user.email, before)
    server.clock.advance(11 * 60)
    try {
      const opened = await c.get(early)
      assert.match(opened.url, /\/account$/, 'still good after 11 minutes')
    } finally {
      server.clock.advance(-11 * 60)
    }

    const d = browser()
    before = sink.to(user.email).length
    await askForLink(d, t, user.email)
    const late = await linkAfter(user.email, before)
    server.clock.advance(15 * 60 + 1)
    try {
      const opened = await d.get(late)
      assert.equal(opened.status, 400)
      assert.match(textOf(opened.html), /This link no longer works/)
      assert.equal(signedIn(d), false)
      assert.equal((await browser().get(late)).status, 400, 'nor shown elsewhere')
    } finally {
      server.clock.advance(-(15 * 60 + 1))
    }
  })

  test('a newer link replaces the older one, and opening the older counts no wrong guess', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('newer'))
    const c = browser()
    let before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const older = await linkAfter(user.email, before)
    before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const newer = await linkAfter(user.email, before)
    // Five openings would burn the newer code if each counted as a wrong guess (SPEC, Limits).
    for (let i = 0; i < 5; i++) {
      const opened = await c.get(older)
      assert.equal(opened.status, 400)
      assert.equal(signedIn(c), false)
    }
    const opened = await c.get(newer)
    assert.match(opened.url, /\/account$/, textOf(opened.html))
  })

  test('an unknown or a suspended address gets the same page and no mail', async () => {
    const t = await tenantWith('link')
    const suspended = await signup(server, t.slug, uniqueEmail('suspended'))
    await setUser(server, t.tenantId, suspended.user.id, { status: 'Suspended' })
    const known = await signup(server, t.slug, uniqueEmail('known'))
    const unknown = uniqueEmail('unknown')
    const texts: string[] = []
    for (const email of [known.email, suspended.email, unknown]) {
      const page = await askForLink(browser(), t, email)
      assert.equal(page.status, 200)
      texts.push(textOf(page.html).replace(email, 'ADDRESS'))
    }
    assert.equal(texts[1], texts[0])
    assert.equal(texts[2], texts[0])
    await sink.waitFor(known.email)
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(sink.to(suspended.email).length, 0)
    assert.equal(sink.to(unknown).length, 0)
  })

  test('bad input: a malformed address is refused by its field and mails nothing', async () => {
    const t = await tenantWith('link')
    const c = browser()
    const before = sink.messages.length
    for (const email of ['', 'not-an-address', `${'a'.repeat(250)}@example.com`]) {
      const page = await askForLink(c, t, email)
      assert.equal(page.status, 400, email)
      assert.match(page.html, /id="email-error"/, email)
    }
    await new Promise((r) => setTimeout(r, 300))
    assert.equal(sink.messages.length, before)
  })

  test('bad input: an altered token, one of another workspace, or none is refused alike', async () => {
    const t = await tenantWith('link')
    const other = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('altered'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const link = await linkAfter(user.email, before)
    const token = decodeURIComponent(new URL(link, 'http://x').searchParams.get('token') ?? '')
    const middle = Math.floor(token.length / 2)
    const flipped = `${token.slice(0, middle)}${token[middle] === 'A' ? 'B' : 'A'}${token.slice(middle + 1)}`
    for (const path of [
      `/t/${t.slug}/magic-link?token=${encodeURIComponent(flipped)}`,
      `/t/${other.slug}/magic-link?token=${encodeURIComponent(token)}`,
      `/t/${t.slug}/magic-link`,
      `/t/${t.slug}/magic-link?token=`,
    ]) {
      const page = await c.get(path)
      assert.equal(page.status, 400, path)
      assert.match(textOf(page.html), /This link no longer works/, path)
      assert.equal(signedIn(c), false, path)
    }
    // The real link still works: the refusals spent nothing.
    assert.match((await c.get(link)).url, /\/account$/)
  })

  test('both: the first button mails a code, the other a link', async () => {
    const t = await tenantWith('both')
    const user = await signup(server, t.slug, uniqueEmail('both'))
    const c = browser()
    const page = await c.get(`/t/${t.slug}/sign-in/code`)
    assert.match(
      page.html,
      /<button type="submit" class="primary">Email me a code<\/button> <button type="submit" name="method" value="link">Email me a link<\/button>/,
    )
    let before = sink.to(user.email).length
    const coded = await askForLink(c, t, user.email)
    assert.match(textOf(coded.html), /6-digit code/)
    const codeMail = await sink.waitFor(user.email, before + 1)
    assert.equal(codeMail.subject, `Your sign-in code for Tenant ${t.slug}`)
    before = sink.to(user.email).length
    await askForLink(c, t, user.email, 'link')
    assert.match(await linkAfter(user.email, before), /\/magic-link\?token=/)
  })

  test('code: the SPEC flow as it was; a method=link field changes nothing', async () => {
    const t = await tenantWith('code')
    const user = await signup(server, t.slug, uniqueEmail('coded'))
    const c = browser()
    const page = await c.get(`/t/${t.slug}/sign-in/code`)
    assert.doesNotMatch(page.html, /name="method"/)
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email, 'link')
    const mail = await sink.waitFor(user.email, before + 1)
    assert.equal(mail.subject, `Your sign-in code for Tenant ${t.slug}`)
    assert.doesNotMatch(mail.text, /magic-link/)
  })

  test('with mfaPolicy Required the link leads to the second factor set-up, not a session', async () => {
    const t = await tenantWith('link', { mfaPolicy: 'Required' })
    const user = await signup(server, t.slug, uniqueEmail('mfa'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const opened = await c.get(await linkAfter(user.email, before))
    assert.match(textOf(opened.html), /Set up an authenticator app/)
    assert.equal(signedIn(c), false)
  })

  test("the tenant's magic_link template words the mail, and its {{link}} works", async () => {
    const t = await tenantWith('link')
    const saved = await server.request(
      'PUT',
      `/v1/${t.slug}/email-templates/magic_link/en`,
      { subject: 'Come in', text: 'Here: {{link}} (for {{expiresInMinutes}} minutes)' },
      { token: t.admin.accessToken },
    )
    assert.equal(saved.status, 200, JSON.stringify(saved.body))
    const user = await signup(server, t.slug, uniqueEmail('templated'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const mail = await sink.waitFor(user.email, before + 1)
    assert.equal(mail.subject, 'Come in')
    assert.match(mail.text, /^Here: http\S+\/magic-link\?token=\S+ \(for 15 minutes\)/)
    assert.match((await c.get(await linkAfter(user.email, before))).url, /\/account$/)
  })

  test("the tenant's before_sign_in hook hears magic_link for a link's code, login_code for a mailed one", async (ctx: TestContext) => {
    const t = await tenantWith('both')
    const hook = await receiver(ctx, (_n, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ decision: 'allow' }))
    })
    const added = await server.request(
      'POST',
      `/v1/${t.slug}/hooks`,
      { event: 'before_sign_in', url: hook.url },
      { token: t.admin.accessToken },
    )
    assert.equal(added.status, 200, JSON.stringify(added.body))
    const user = await signup(server, t.slug, uniqueEmail('hooked'))
    const methods = () => hook.received.map((r) => JSON.parse(r.body).context.method)

    const c = browser()
    let before = sink.to(user.email).length
    await askForLink(c, t, user.email, 'link')
    assert.match((await c.get(await linkAfter(user.email, before))).url, /\/account$/)
    assert.deepEqual(methods(), ['magic_link'])

    const d = browser()
    before = sink.to(user.email).length
    const sent = await askForLink(d, t, user.email)
    const code = await sink.codeAfter(user.email, before)
    const typed = await d.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(sent.html, 'pending') ?? '',
      code,
    })
    assert.match(typed.url, /\/account$/)
    assert.deepEqual(methods(), ['magic_link', 'login_code'])
  })

  test('a prefetch or a HEAD of the link signs nobody in and spends nothing', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('prefetch'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const link = await linkAfter(user.email, before)
    const head = await c.once('HEAD', link)
    assert.equal(head.status, 204)
    for (const [name, value] of [
      ['sec-purpose', 'prefetch'],
      ['sec-purpose', 'prefetch;prerender'],
      ['purpose', 'prefetch'],
    ]) {
      c.headers[name] = value
      const fetched = await c.get(link)
      delete c.headers[name]
      assert.equal(fetched.status, 204, `${name}: ${value}`)
      assert.equal(signedIn(c), false, `${name}: ${value}`)
    }
    assert.match((await c.get(link)).url, /\/account$/, 'the link itself still works')
  })

  test("a hook's deny after a link is said on the page, not as a link that no longer works", async (ctx: TestContext) => {
    const t = await tenantWith('link', { passwordlessJitSignup: true })
    const hook = await receiver(ctx, (_n, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ decision: 'deny', message: 'Not during the audit freeze.' }))
    })
    const added = await server.request(
      'POST',
      `/v1/${t.slug}/hooks`,
      { event: 'before_sign_in', url: hook.url },
      { token: t.admin.accessToken },
    )
    assert.equal(added.status, 200, JSON.stringify(added.body))
    const user = await signup(server, t.slug, uniqueEmail('denied'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const opened = await c.get(await linkAfter(user.email, before))
    assert.equal(opened.status, 403)
    assert.match(textOf(opened.html), /Not during the audit freeze\./)
    assert.doesNotMatch(textOf(opened.html), /This link no longer works/)
    assert.equal(signedIn(c), false)
  })

  test('a JIT sign-up by link asks before_sign_up with method magic_link', async (ctx: TestContext) => {
    const t = await tenantWith('link', { passwordlessJitSignup: true })
    const hook = await receiver(ctx, (_n, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ decision: 'allow' }))
    })
    const added = await server.request(
      'POST',
      `/v1/${t.slug}/hooks`,
      { event: 'before_sign_up', url: hook.url },
      { token: t.admin.accessToken },
    )
    assert.equal(added.status, 200, JSON.stringify(added.body))
    const email = uniqueEmail('jit')
    await askForLink(browser(), t, email)
    await linkAfter(email, 0)
    assert.deepEqual(
      hook.received.map((r) => JSON.parse(r.body).context.method),
      ['magic_link'],
    )
  })

  test('a PasswordOnly workspace refuses a link it sent before the policy changed', async () => {
    const t = await tenantWith('link')
    const user = await signup(server, t.slug, uniqueEmail('closed'))
    const c = browser()
    const before = sink.to(user.email).length
    await askForLink(c, t, user.email)
    const link = await linkAfter(user.email, before)
    const closed = await server.request(
      'PATCH',
      `/v1/${t.slug}/tenant`,
      { authPolicy: 'PasswordOnly' },
      { token: t.admin.accessToken },
    )
    assert.equal(closed.status, 200)
    server.deps.tenants.forget(t.slug)
    const opened = await c.get(link)
    assert.equal(opened.status, 400)
    assert.equal(signedIn(c), false)
  })
})
