// The hosted pages over HTTP, as a browser without JavaScript uses them: forms, cookies,
// redirects. The browser suite (test/web/browser.test.ts) drives the same pages in
// Chromium; this one checks the rules every page keeps (headers, cookies, CSRF, errors in
// words) and each flow against the database.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import * as client from 'openid-client'
import { tenantSnapshot } from '../db.ts'
import { enrolTotp, enrolWithRecoveryCodes, totpAt } from '../fixtures/mfa.ts'
import { connectedTenant, discoveryConfig, newAccount, roundTrip } from '../fixtures/oauth.ts'
import { createApplication, oidcClient } from '../fixtures/oidc.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { startOidcProvider } from '../oidc-provider.ts'
import { SmtpSink } from '../smtp-sink.ts'
import { hiddenValue, PageClient, textOf } from './page-client.ts'

let server: TestServer
let sink: SmtpSink

before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
})
after(() => sink.stop())

const browser = () => new PageClient(server, randomIp())

async function setPolicy(slug: string, token: string, patch: Record<string, unknown>) {
  const res = await server.request('PATCH', `/v1/${slug}/tenant`, patch, { token })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  server.deps.tenants.forget(slug)
}

async function signedIn(slug: string, email: string, password = STRONG_PASSWORD) {
  const c = browser()
  await c.get(`/t/${slug}/sign-in`)
  const page = await c.post(`/t/${slug}/sign-in`, { email, password })
  assert.equal(page.status, 200, textOf(page.html))
  assert.match(page.url, /\/account$/)
  return c
}

describe('every page', () => {
  test('is HTML with a strict CSP, no framing, no caching, and no inline script or style', async () => {
    const t = await createTenant(server, { name: 'Acme <Rockets> & "Co"' })
    const c = browser()
    for (const path of ['sign-in', 'sign-up', 'sign-in/code', 'invite?token=x']) {
      const page = await c.get(`/t/${t.slug}/${path}`)
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
      const csp = page.headers.get('content-security-policy') ?? ''
      assert.match(csp, /default-src 'none'/)
      assert.match(csp, /script-src 'self'(;|$)/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/)
      assert.equal(page.headers.get('x-frame-options'), 'DENY')
      assert.equal(page.headers.get('cache-control'), 'no-store')
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer')
      assert.doesNotMatch(page.html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script')
      assert.doesNotMatch(page.html, /\sstyle=|<style/, 'no inline style')
      assert.doesNotMatch(page.html, /\son[a-z]+=/, 'no inline event handler')
      // The tenant's name on every page, escaped.
      assert.ok(page.html.includes('Acme &lt;Rockets&gt; &amp; &quot;Co&quot;'), path)
      assert.ok(!page.html.includes('<Rockets>'))
    }
  })

  test('the CSRF cookie is HttpOnly, SameSite=Lax and scoped to the tenant; Secure behind HTTPS', async (t) => {
    const tenant = await createTenant(server)
    const page = await browser().get(`/t/${tenant.slug}/sign-in`)
    const cookie = page.headers.getSetCookie().find((c) => c.startsWith('ta_csrf='))
    assert.ok(cookie)
    assert.match(cookie, /; Path=\/t\/[a-z0-9-]+; HttpOnly; SameSite=Lax$/)
    assert.ok(cookie.includes(`Path=/t/${tenant.slug};`))
    const https = await startTestServer(t, { publicUrl: 'https://auth.example.com' })
    const other = await createTenant(https)
    const secure = await new PageClient(https).get(`/t/${other.slug}/sign-in`)
    assert.match(secure.headers.getSetCookie()[0], /; Secure/)
  })

  test('an unknown workspace is a 404 page, not JSON', async () => {
    const page = await browser().get('/t/no-such-workspace-here/sign-in')
    assert.equal(page.status, 404)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.match(textOf(page.html), /No such workspace/)
    const malformed = await browser().get('/t/NOT_A_SLUG/sign-in')
    assert.equal(malformed.status, 404)
    assert.match(textOf(malformed.html), /No such workspace/)
  })

  test('an unknown page is a 404 page', async () => {
    const t = await createTenant(server)
    const page = await browser().get(`/t/${t.slug}/nope`)
    assert.equal(page.status, 404)
    assert.match(textOf(page.html), /Page not found/)
  })

  test('pages are not in the OpenAPI document', async () => {
    const doc = await server.request('GET', '/v1/openapi.json')
    assert.ok(!Object.keys(doc.body.paths).some((p) => p.startsWith('/t/')))
  })
})

describe('CSRF', () => {
  test("a form posted without its field, with another browser's, or with a forged one is refused and changes nothing", async () => {
    const t = await createTenant(server)
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const other = browser()
    await other.get(`/t/${t.slug}/sign-in`)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const field of ['', other.csrf(), 'forged', `${c.csrf()}x`]) {
      const page = await c.post(`/t/${t.slug}/sign-in`, {
        _csrf: field,
        email: t.adminEmail,
        password: t.adminPassword,
      })
      assert.equal(page.status, 403)
      assert.match(textOf(page.html), /This form has expired/)
    }
    assert.ok(!c.cookies.has('ta_session'))
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test('a body the pages cannot read is a page with the workspace name, and changes nothing', async () => {
    const t = await createTenant(server, { name: 'Readable & Co' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const [body, type] of [
      ['{"email":', 'application/json'],
      [`_csrf=${c.csrf()}&email=${'x'.repeat(70 * 1024)}`, 'application/x-www-form-urlencoded'],
    ]) {
      const page = await c.send('POST', `/t/${t.slug}/sign-in`, body, type)
      assert.ok(page.status >= 400 && page.status < 500, String(page.status))
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
      assert.match(textOf(page.html), /This request could not be read/)
      assert.match(textOf(page.html), /Readable & Co/, 'the workspace is named')
      assert.doesNotMatch(page.html, /"code":/, 'no JSON envelope')
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
  })

  test("a CSRF field of one tenant's pages does not work on another's", async () => {
    const a = await createTenant(server)
    const b = await createTenant(server)
    const c = browser()
    await c.get(`/t/${a.slug}/sign-in`)
    const field = c.csrf()
    await c.get(`/t/${b.slug}/sign-in`)
    const page = await c.post(`/t/${b.slug}/sign-in`, {
      _csrf: field,
      email: b.adminEmail,
      password: b.adminPassword,
    })
    assert.equal(page.status, 403)
  })
})

describe('CSRF bound to the page session (CONTRACT §16)', () => {
  test("csrf.session-binding: a planted secret with its own field, sent with the victim's session, is refused and answers nothing", async () => {
    const t = await createTenant(server)
    const victim = await signup(server, t.slug)
    const attacker = await signup(server, t.slug)
    const victimBrowser = await signedIn(t.slug, victim.email)
    // The attacker's secrets and the fields the pages gave for them: signed out, and signed
    // in as the attacker's own account.
    const anonymous = browser()
    await anonymous.get(`/t/${t.slug}/sign-in`)
    const own = await signedIn(t.slug, attacker.email)
    const before = await tenantSnapshot(server, t.tenantId)
    for (const source of [anonymous, own]) {
      // The secret planted in the victim's browser (a sibling subdomain's cookie, a plain-http
      // response), and the matching field in a form on the attacker's same-site page.
      const planted = browser()
      planted.cookies.set('ta_session', victimBrowser.cookies.get('ta_session') ?? '')
      planted.cookies.set('ta_csrf', source.cookies.get('ta_csrf') ?? '')
      const field = source.csrf()
      assert.ok(field)
      const exported = await planted.post(`/t/${t.slug}/account/export`, { _csrf: field })
      assert.equal(exported.status, 403)
      assert.match(textOf(exported.html), /This form has expired/)
      assert.equal(exported.headers.get('content-disposition'), null)
      assert.ok(!exported.html.includes(victim.email), 'nothing of the victim is answered')
      const deleted = await planted.post(`/t/${t.slug}/account/delete`, {
        _csrf: field,
        confirm: 'DELETE',
      })
      assert.equal(deleted.status, 403)
    }
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    // The victim's own form still works.
    await victimBrowser.get(`/t/${t.slug}/account`)
    const mine = await victimBrowser.post(`/t/${t.slug}/account/export`, {})
    assert.equal(mine.status, 200)
    assert.equal(JSON.parse(mine.html).user.email, victim.email)
  })

  test("csrf.renewed-at-sign-in: the signed-out page's field stops working, and a new secret replaces the old", async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const signedOutField = c.csrf()
    const signedOutSecret = c.cookies.get('ta_csrf') ?? ''
    const page = await c.post(`/t/${t.slug}/sign-in`, {
      email: user.email,
      password: STRONG_PASSWORD,
    })
    assert.match(page.url, /\/account$/)
    assert.ok(c.cookies.get('ta_csrf'), 'a secret is set at sign-in')
    assert.notEqual(c.cookies.get('ta_csrf'), signedOutSecret, 'a new secret at sign-in')
    const before = await tenantSnapshot(server, t.tenantId)
    let refused = await c.post(`/t/${t.slug}/account/export`, { _csrf: signedOutField })
    assert.equal(refused.status, 403)
    assert.equal(refused.headers.get('content-disposition'), null)
    // The pre-sign-in secret put back (planted before the sign-in), with its own field.
    const signedInSecret = c.cookies.get('ta_csrf') ?? ''
    c.cookies.set('ta_csrf', signedOutSecret)
    refused = await c.post(`/t/${t.slug}/account/export`, { _csrf: signedOutField })
    assert.equal(refused.status, 403)
    assert.deepEqual(await tenantSnapshot(server, t.tenantId), before)
    // The account page's own field works.
    c.cookies.set('ta_csrf', signedInSecret)
    await c.get(`/t/${t.slug}/account`)
    assert.equal((await c.post(`/t/${t.slug}/account/export`, {})).status, 200)
    // Signing out renews it again: the signed-in page's field is dead.
    const accountField = c.csrf()
    await c.post(`/t/${t.slug}/sign-out`, {})
    const afterSignOut = await c.post(`/t/${t.slug}/sign-in`, {
      _csrf: accountField,
      email: user.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(afterSignOut.status, 403)
  })

  test('csrf.host-cookies: on https the page cookies are __Host- cookies named for the tenant (Path=/, Secure, no Domain)', async (t) => {
    const https = await startTestServer(t, { publicUrl: 'https://auth.example.com' })
    const tenant = await createTenant(https)
    const c = new PageClient(https, randomIp())
    await c.get(`/t/${tenant.slug}/sign-in`)
    await c.post(`/t/${tenant.slug}/sign-in`, {
      email: tenant.adminEmail,
      password: STRONG_PASSWORD,
    })
    assert.match(c.last?.url ?? '', /\/account$/)
    for (const name of [`__Host-ta_csrf_${tenant.slug}`, `__Host-ta_session_${tenant.slug}`]) {
      const line = c.setCookieLines.get(name) ?? ''
      assert.match(line, /; Path=\/; HttpOnly; SameSite=Lax; Secure(;|$)/, name)
      assert.doesNotMatch(line, /domain=/i, name)
    }
    assert.ok(!c.cookies.has('ta_session') && !c.cookies.has('ta_csrf'), 'no unprefixed cookie')
  })

  test("csrf.host-cookies: two tenants' page sessions in one browser stay apart on https", async (t) => {
    const https = await startTestServer(t, { publicUrl: 'https://auth.example.com' })
    const a = await createTenant(https)
    const b = await createTenant(https)
    // One cookie jar: with Path=/ every page cookie reaches every tenant's pages.
    const c = new PageClient(https, randomIp())
    for (const x of [a, b]) {
      await c.get(`/t/${x.slug}/sign-in`)
      const page = await c.post(`/t/${x.slug}/sign-in`, {
        email: x.adminEmail,
        password: STRONG_PASSWORD,
      })
      assert.match(page.url, /\/account$/)
    }
    const pageA = await c.get(`/t/${a.slug}/account`)
    assert.match(pageA.url, /\/account$/)
    assert.ok(pageA.html.includes(a.adminEmail) && !pageA.html.includes(b.adminEmail))
    const fieldA = c.csrf()
    const pageB = await c.get(`/t/${b.slug}/account`)
    assert.ok(pageB.html.includes(b.adminEmail) && !pageB.html.includes(a.adminEmail))
    // Each tenant's form works on its own pages only.
    const before = await tenantSnapshot(https, b.tenantId)
    const crossed = await c.post(`/t/${b.slug}/account/export`, { _csrf: fieldA })
    assert.equal(crossed.status, 403)
    assert.deepEqual(await tenantSnapshot(https, b.tenantId), before)
    const own = await c.post(`/t/${a.slug}/account/export`, { _csrf: fieldA })
    assert.equal(own.status, 200)
    assert.equal(JSON.parse(own.html).user.email, a.adminEmail)
  })
})

describe('sign in with a password', () => {
  test('a wrong password shows a sentence, keeps the address, and sets no session', async () => {
    const t = await createTenant(server)
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const page = await c.post(`/t/${t.slug}/sign-in`, {
      email: t.adminEmail,
      password: 'not-the-password-1',
    })
    assert.equal(page.status, 401)
    assert.match(textOf(page.html), /The email address or password is not right\./)
    assert.ok(page.html.includes(`value="${t.adminEmail}"`))
    assert.doesNotMatch(page.html, /"code":|invalid_credentials/, 'no JSON envelope')
    assert.ok(!c.cookies.has('ta_session'))
  })

  test('a malformed address is shown next to the field', async () => {
    const t = await createTenant(server)
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const page = await c.post(`/t/${t.slug}/sign-in`, { email: 'nope', password: 'x' })
    assert.equal(page.status, 400)
    assert.match(page.html, /id="email-error"[^>]*>Enter an email address/)
    assert.match(page.html, /aria-invalid="true"/)
  })

  test('the right password opens the account page with an HttpOnly session cookie', async () => {
    const t = await createTenant(server)
    const c = await signedIn(t.slug, t.adminEmail)
    assert.match(textOf(c.last?.html ?? ''), new RegExp(`Your account.*${t.adminEmail}`))
    const line = c.setCookieLines.get('ta_session') ?? ''
    assert.match(line, new RegExp(`; Path=/t/${t.slug}; .*HttpOnly; SameSite=Lax`), line)
    // Sealed (key version, IV, tag and ciphertext, joined by colons), so no token is in it.
    // A JWT is three dot-separated segments; the sealed form has no dot. (A bare search for
    // "eyJ" would also match ciphertext by chance, about once in 400 sign-ins.)
    const session = decodeURIComponent(c.cookies.get('ta_session') ?? '')
    assert.match(session, /^[\w-]+:[\w-]+:[\w-]+:[\w-]+$/, 'the cookie is a sealed value')
    assert.doesNotMatch(session, /eyJ[\w-]*\.[\w-]*\./, 'the cookie holds no readable token')
    const actions = await server.request('GET', `/v1/${t.slug}/audit?action=UserLogin`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(actions.body.items[0].metadata.via, 'password')
  })

  test('too many attempts answer 429 with when to try again', async (t) => {
    const limited = await startTestServer(t, {
      limits: { ...server.deps.config.limits, loginFailures: { points: 2, seconds: 900 } },
    })
    const tenant = await createTenant(limited)
    const c = new PageClient(limited, randomIp())
    await c.get(`/t/${tenant.slug}/sign-in`)
    let page = await c.post(`/t/${tenant.slug}/sign-in`, {
      email: tenant.adminEmail,
      password: 'wrong-1-wrong',
    })
    page = await c.post(`/t/${tenant.slug}/sign-in`, {
      email: tenant.adminEmail,
      password: 'wrong-2-wrong',
    })
    page = await c.post(`/t/${tenant.slug}/sign-in`, {
      email: tenant.adminEmail,
      password: 'wrong-3-wrong',
    })
    assert.equal(page.status, 429)
    assert.match(textOf(page.html), /Too many attempts\. Please try again in \d+ minutes\./)
  })

  test('a second factor: wrong code shown by the field, then the right one signs in', async () => {
    const t = await createTenant(server)
    const secret = await enrolTotp(server, t.slug, t.admin.accessToken)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Required' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    let page = await c.post(`/t/${t.slug}/sign-in`, {
      email: t.adminEmail,
      password: STRONG_PASSWORD,
    })
    assert.equal(page.status, 200)
    assert.match(textOf(page.html), /Confirm it is you/)
    assert.ok(!page.html.includes(STRONG_PASSWORD), 'the password is not in the page')
    const pending = hiddenValue(page.html, 'pending') ?? ''
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending,
      method: 'totp',
      totpCode: '000000',
    })
    assert.match(page.html, /id="totpCode-error"[^>]*>That code is wrong/)
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      method: 'totp',
      totpCode: totpAt(server, secret),
    })
    assert.match(page.url, /\/account$/)
    assert.ok(c.cookies.has('ta_session'))
    assert.deepEqual(amrOf(c, t.tenantId), ['pwd', 'otp', 'mfa'])
  })

  test('a recovery code instead of the app: a spent one is refused by its field', async () => {
    const t = await createTenant(server)
    const { recoveryCodes } = await enrolWithRecoveryCodes(server, t.slug, t.admin.accessToken)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Optional' })
    const signInWith = async (recoveryCode: string) => {
      const c = browser()
      await c.get(`/t/${t.slug}/sign-in`)
      const first = await c.post(`/t/${t.slug}/sign-in`, {
        email: t.adminEmail,
        password: STRONG_PASSWORD,
      })
      assert.match(first.html, /Use a recovery code instead/)
      const page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
        pending: hiddenValue(first.html, 'pending') ?? '',
        method: 'recovery',
        recoveryCode,
      })
      return { c, page }
    }
    const used = await signInWith(recoveryCodes[0].toUpperCase())
    assert.match(used.page.url, /\/account$/)
    // A look-up secret has no RFC 8176 value: `mfa` alone, beside the password (no `otp`).
    assert.deepEqual(amrOf(used.c, t.tenantId), ['pwd', 'mfa'])
    const again = await signInWith(recoveryCodes[0])
    assert.match(
      again.page.html,
      /id="recoveryCode-error"[^>]*>That code is wrong or has already been used/,
    )
    assert.match(again.page.html, /<details open>/, 'the recovery form stays open')
    assert.ok(!again.c.cookies.has('ta_session'))
  })

  test('a user without an authenticator is offered only the emailed code, also after a wrong one', async () => {
    const t = await createTenant(server)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Required' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    let page = await c.post(`/t/${t.slug}/sign-in`, {
      email: t.adminEmail,
      password: STRONG_PASSWORD,
    })
    assert.doesNotMatch(page.html, /name="totpCode"/)
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      method: 'send-email',
    })
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      method: 'email',
      emailOtpCode: '000000',
    })
    assert.match(page.html, /id="emailOtpCode-error"/)
    assert.doesNotMatch(page.html, /name="totpCode"|Use a recovery code/)
  })

  test('the sealed first factor works only for this browser and this tenant', async () => {
    const t = await createTenant(server)
    await enrolTotp(server, t.slug, t.admin.accessToken)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Required' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    const page = await c.post(`/t/${t.slug}/sign-in`, {
      email: t.adminEmail,
      password: STRONG_PASSWORD,
    })
    const pending = hiddenValue(page.html, 'pending') ?? ''
    const thief = browser()
    await thief.get(`/t/${t.slug}/sign-in`)
    const stolen = await thief.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending,
      method: 'send-email',
    })
    assert.match(textOf(stolen.html), /That took too long/)
    // The ciphertext's first character changed: always a different first byte. (Writing "AA"
    // over the last two characters left the value as it was about once in 256 runs.)
    const at = pending.lastIndexOf(':') + 1
    const flipped = `${pending.slice(0, at)}${pending[at] === 'A' ? 'B' : 'A'}${pending.slice(at + 1)}`
    const tampered = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: flipped,
      method: 'send-email',
    })
    assert.match(textOf(tampered.html), /That took too long/)
  })

  test('the email factor: a code is mailed, and signs in', async () => {
    const t = await createTenant(server)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Required' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in`)
    let page = await c.post(`/t/${t.slug}/sign-in`, {
      email: t.adminEmail,
      password: STRONG_PASSWORD,
    })
    const before = sink.to(t.adminEmail).length
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      method: 'send-email',
    })
    assert.match(textOf(page.html), /We emailed you a 6-digit code/)
    const code = await sink.codeAfter(t.adminEmail, before)
    page = await c.post(`/t/${t.slug}/sign-in/second-factor`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      method: 'email',
      emailOtpCode: code,
    })
    assert.match(page.url, /\/account$/)
  })
})

describe('sign in with an emailed code', () => {
  test('the code signs in; under Required a first authenticator is set up with the QR code', async () => {
    const t = await createTenant(server)
    await setPolicy(t.slug, t.admin.accessToken, {
      authPolicy: 'PasswordAndPasswordless',
      mfaPolicy: 'Required',
    })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in/code`)
    const before = sink.to(t.adminEmail).length
    let page = await c.post(`/t/${t.slug}/sign-in/code`, { email: t.adminEmail })
    assert.match(textOf(page.html), /Check your email/)
    const code = await sink.codeAfter(t.adminEmail, before)
    page = await c.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code,
    })
    assert.match(textOf(page.html), /Set up an authenticator app/)
    assert.match(page.html, /<svg/)
    const secret = /class="secret">([A-Z2-7]+)</.exec(page.html)?.[1] ?? ''
    assert.ok(secret.length >= 16)
    page = await c.post(`/t/${t.slug}/sign-in/code/enrol`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      totpCode: totpAt(server, secret),
    })
    assert.ok(c.cookies.has('ta_session'), textOf(page.html))
  })

  test('a wrong code is shown by the field; a PasswordOnly workspace sends to the password form', async () => {
    const t = await createTenant(server)
    const c = browser()
    const page = await c.get(`/t/${t.slug}/sign-in/code`)
    assert.match(page.url, /\/sign-in$/)
    await setPolicy(t.slug, t.admin.accessToken, { authPolicy: 'PasswordAndPasswordless' })
    await c.get(`/t/${t.slug}/sign-in/code`)
    let step = await c.post(`/t/${t.slug}/sign-in/code`, { email: t.adminEmail })
    step = await c.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(step.html, 'pending') ?? '',
      code: '000000',
    })
    assert.equal(step.status, 401)
    assert.match(step.html, /id="code-error"[^>]*>That code is wrong/)
  })
})

describe('sign up and invitations', () => {
  test('sign-up opens a session; a weak password is explained by its field', async () => {
    const t = await createTenant(server)
    const c = browser()
    await c.get(`/t/${t.slug}/sign-up`)
    const email = uniqueEmail()
    let page = await c.post(`/t/${t.slug}/sign-up`, { email, password: 'short' })
    assert.equal(page.status, 400)
    assert.match(page.html, /id="password-error"[^>]*>Use at least 12 characters\./)
    page = await c.post(`/t/${t.slug}/sign-up`, { email, password: 'qwerty123456' })
    assert.equal(page.status, 400)
    assert.match(page.html, /id="password-error"[^>]*>This password is too common/)
    page = await c.post(`/t/${t.slug}/sign-up`, { email, password: STRONG_PASSWORD })
    assert.match(page.url, /\/account$/)
    assert.ok(page.html.includes(email))
  })

  test('the invitation mail links to the page that accepts it', async () => {
    const t = await createTenant(server)
    const email = uniqueEmail('invitee')
    const before = sink.to(email).length
    const invite = await server.request(
      'POST',
      `/v1/${t.slug}/invites`,
      { email, role: 'Member' },
      {
        token: t.admin.accessToken,
      },
    )
    assert.equal(invite.status, 200, JSON.stringify(invite.body))
    const mail = await sink.waitFor(email, before + 1)
    const link = mail.text.split('\n').find((l) => l.includes(`/t/${t.slug}/invite?token=`)) ?? ''
    assert.ok(link.startsWith(server.deps.config.publicUrl), mail.text)
    const c = browser()
    let page = await c.get(new URL(link).pathname + new URL(link).search)
    assert.match(textOf(page.html), /Join Tenant/)
    page = await c.post(`/t/${t.slug}/invite`, {
      token: hiddenValue(page.html, 'token') ?? '',
      password: STRONG_PASSWORD,
    })
    assert.match(page.url, /\/account$/)
    assert.ok(page.html.includes(email))
    const again = await c.post(`/t/${t.slug}/invite`, {
      token: new URL(link).searchParams.get('token') ?? '',
      password: STRONG_PASSWORD,
    })
    assert.match(textOf(again.html), /already accepted/)
  })
})

describe('the account page', () => {
  test('without a session it sends to sign-in', async () => {
    const t = await createTenant(server)
    const page = await browser().get(`/t/${t.slug}/account`)
    assert.match(page.url, /\/sign-in$/)
  })

  test("a forged or other tenant's session cookie is no session", async () => {
    const a = await createTenant(server)
    const b = await createTenant(server)
    const c = await signedIn(a.slug, a.adminEmail)
    const page = await c.get(`/t/${b.slug}/account`)
    assert.match(page.url, /\/sign-in$/)
    c.cookies.set('ta_session', 'v1:AAAA:BBBB:CCCC')
    assert.match((await c.get(`/t/${a.slug}/account`)).url, /\/sign-in$/)
  })

  test('two page loads at once with an expiring session refresh it once: the session lives', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    // A page session whose access token is due for a refresh.
    const sealed = server.deps.cipher.encrypt(
      JSON.stringify({
        accessToken: user.accessToken,
        refreshToken: user.refreshToken,
        expiresAt: 0,
      }),
      `page-session:${t.tenantId}`,
    )
    const [a, b] = [browser(), browser()]
    for (const c of [a, b]) c.cookies.set('ta_session', encodeURIComponent(sealed))
    const pages = await Promise.all([a.get(`/t/${t.slug}/account`), b.get(`/t/${t.slug}/account`)])
    for (const page of pages) assert.match(page.url, /\/account$/)
    const compromised = await server.request(
      'GET',
      `/v1/${t.slug}/audit?action=SessionFamilyCompromised`,
      undefined,
      { token: t.admin.accessToken },
    )
    assert.deepEqual(compromised.body.items, [])
    assert.match((await a.get(`/t/${t.slug}/account`)).url, /\/account$/)
  })

  test('a page session ended elsewhere (sign out everywhere) leads back to sign-in, cookie cleared', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    const all = await server.request('POST', `/v1/${t.slug}/auth/logout-all`, undefined, {
      token: user.accessToken,
    })
    assert.equal(all.status, 200, JSON.stringify(all.body))
    const page = await c.get(`/t/${t.slug}/account`)
    assert.match(page.url, /\/sign-in$/)
    assert.equal(page.status, 200)
    assert.ok(!c.cookies.has('ta_session'), 'the dead session cookie is cleared')
  })

  test('password change: a wrong current password is shown by its field; the right one ends other sessions', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    let page = await c.post(`/t/${t.slug}/account/password`, {
      currentPassword: 'wrong-current-1',
      newPassword: 'quartz-harbor-lantern-58',
    })
    assert.match(page.html, /id="currentPassword-error"[^>]*>Your current password is not right/)
    page = await c.post(`/t/${t.slug}/account/password`, {
      currentPassword: STRONG_PASSWORD,
      newPassword: 'quartz-harbor-lantern-58',
    })
    assert.match(textOf(page.html), /Your password is changed/)
    const old = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(old.status, 401)
  })

  test('an authenticator app is set up from the account page', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    let page = await c.post(`/t/${t.slug}/account/totp`, {})
    const secret = /class="secret">([A-Z2-7]+)</.exec(page.html)?.[1] ?? ''
    page = await c.post(`/t/${t.slug}/account/totp/verify`, { secret, code: '000000' })
    assert.match(page.html, /id="code-error"/)
    page = await c.post(`/t/${t.slug}/account/totp/verify`, {
      secret,
      code: totpAt(server, secret),
    })
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: user.accessToken,
    })
    assert.equal(me.body.totpEnrolled, true, textOf(page.html))
  })

  test('sign-out ends the session in the service', async () => {
    const t = await createTenant(server)
    const c = await signedIn(t.slug, t.adminEmail)
    const page = await c.post(`/t/${t.slug}/sign-out`, {})
    assert.match(textOf(page.html), /You are signed out/)
    assert.ok(!c.cookies.has('ta_session'))
    assert.match((await c.get(`/t/${t.slug}/account`)).url, /\/sign-in$/)
    const actions = await server.request(
      'GET',
      `/v1/${t.slug}/audit?action=UserLogout`,
      undefined,
      {
        token: t.admin.accessToken,
      },
    )
    assert.equal(actions.body.items.length, 1)
  })

  test('deleting the account needs DELETE typed, then signs out', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    let page = await c.post(`/t/${t.slug}/account/delete`, { confirm: 'yes' })
    assert.equal(page.status, 400)
    assert.match(page.html, /id="confirm-error"/)
    page = await c.post(`/t/${t.slug}/account/delete`, { confirm: 'DELETE' })
    assert.match(textOf(page.html), /Your account is deleted/)
    const login = await server.request('POST', `/v1/${t.slug}/auth/login`, {
      email: user.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 401)
  })
})

describe('the account page asks "Confirm it\'s you" in place (CONTRACT §16)', () => {
  /** A signed-in browser whose sign-in is older than the 10 minutes of a recent proof. */
  async function staleSignIn(slug: string, email: string) {
    const c = await signedIn(slug, email)
    server.clock.advance(11 * 60)
    return c
  }

  /** A JSON post as pages.js sends it, with the page's CSRF field. */
  async function postJson(c: PageClient, path: string, body: Record<string, unknown>) {
    const res = await c.send(
      'POST',
      path,
      JSON.stringify({ _csrf: c.csrf(), ...body }),
      'application/json',
    )
    return { status: res.status, body: JSON.parse(res.html) }
  }

  test('step-up.totp: an old sign-in is asked for the password; a wrong one is shown by its field and changes nothing; the right one goes on to the enrolment', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await staleSignIn(t.slug, user.email)
    await c.get(`/t/${t.slug}/account`)
    let page = await c.post(`/t/${t.slug}/account/totp`, {})
    assert.equal(page.status, 200)
    assert.match(textOf(page.html), /Confirm it's you Before you set up an authenticator app/)
    assert.match(page.html, /<input id="password" name="password" type="password"/)
    assert.equal(hiddenValue(page.html, 'next'), 'totp')
    assert.doesNotMatch(page.html, /class="secret"/, 'no enrolment began')
    const before = await tenantSnapshot(server, t.tenantId)
    page = await c.post(`/t/${t.slug}/account/confirm`, {
      method: 'password',
      next: 'totp',
      password: 'not-the-password-1',
    })
    assert.equal(page.status, 401)
    assert.match(page.html, /id="password-error"[^>]*>That password is not right\./)
    assert.match(page.html, /aria-invalid="true"/)
    assert.equal(hiddenValue(page.html, 'next'), 'totp', 'the intent is kept')
    // Nothing changed but the failure's audit row (a failed sign-in, §16).
    const { audit: auditAfter, ...after } = await tenantSnapshot(server, t.tenantId)
    const { audit: auditBefore, ...rest } = before
    assert.deepEqual(after, rest)
    const known = new Set((auditBefore as { id: string }[]).map((e) => e.id))
    const added = (auditAfter as { id: string; action: string; metadata: { route?: string } }[])
      .filter((e) => !known.has(e.id))
      .map((e) => `${e.action} ${e.metadata.route}`)
    assert.deepEqual(added, ['UserLoginFailed reauthenticate'])
    page = await c.post(`/t/${t.slug}/account/confirm`, {
      method: 'password',
      next: 'totp',
      password: STRONG_PASSWORD,
    })
    assert.equal(page.status, 200, textOf(page.html))
    assert.match(textOf(page.html), /Set up an authenticator app/)
    const secret = /class="secret">([A-Z2-7]+)</.exec(page.html)?.[1] ?? ''
    page = await c.post(`/t/${t.slug}/account/totp/verify`, {
      secret,
      code: totpAt(server, secret),
    })
    const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, {
      token: user.accessToken,
    })
    assert.equal(me.body.totpEnrolled, true, textOf(page.html))
  })

  test('step-up.passkey: adding a passkey with an old sign-in sends the script to the prompt, which comes back to add it', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await staleSignIn(t.slug, user.email)
    await c.get(`/t/${t.slug}/account`)
    const refused = await postJson(c, `/t/${t.slug}/account/passkeys/options`, {})
    assert.equal(refused.status, 401)
    assert.equal(refused.body.confirm, `/t/${t.slug}/account/confirm?next=passkey`)
    let page = await c.get(`${refused.body.confirm}&name=${encodeURIComponent('Work laptop')}`)
    assert.match(textOf(page.html), /Confirm it's you Before you add a passkey/)
    assert.equal(hiddenValue(page.html, 'name'), 'Work laptop')
    page = await c.post(`/t/${t.slug}/account/confirm`, {
      method: 'password',
      next: 'passkey',
      name: 'Work laptop',
      password: STRONG_PASSWORD,
    })
    assert.match(page.url, /\/account\?continue=passkey&name=Work%20laptop/)
    assert.match(page.html, /data-passkey="register"[^>]*data-autostart/)
    assert.match(page.html, /id="passkey-name"[^>]*value="Work laptop"/)
    const options = await postJson(c, `/t/${t.slug}/account/passkeys/options`, {})
    assert.equal(options.status, 200, JSON.stringify(options.body))
    assert.equal(typeof options.body.challenge, 'string')
  })

  test('step-up.delete: closing the account with an old sign-in is confirmed first, then done', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await staleSignIn(t.slug, user.email)
    await c.get(`/t/${t.slug}/account`)
    let page = await c.post(`/t/${t.slug}/account/delete`, { confirm: 'DELETE' })
    assert.match(textOf(page.html), /Before you close your account/)
    const login = () =>
      server.request('POST', `/v1/${t.slug}/auth/login`, {
        email: user.email,
        password: STRONG_PASSWORD,
      })
    assert.equal((await login()).status, 200, 'not deleted yet')
    page = await c.post(`/t/${t.slug}/account/confirm`, {
      method: 'password',
      next: 'delete',
      password: STRONG_PASSWORD,
    })
    assert.match(textOf(page.html), /Your account is deleted/)
    assert.equal((await login()).status, 401)
  })

  test('step-up.code: a user of a password-less workspace confirms with a mailed code; a wrong code is shown by its field', async () => {
    const t = await createTenant(server)
    await setPolicy(t.slug, t.admin.accessToken, { authPolicy: 'PasswordlessOnly' })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-in/code`)
    let before = sink.to(t.adminEmail).length
    let page = await c.post(`/t/${t.slug}/sign-in/code`, { email: t.adminEmail })
    page = await c.post(`/t/${t.slug}/sign-in/code/verify`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code: await sink.codeAfter(t.adminEmail, before),
    })
    assert.match(page.url, /\/account$/)
    server.clock.advance(11 * 60)
    page = await c.post(`/t/${t.slug}/account/totp`, {})
    assert.match(textOf(page.html), /Confirm it's you/)
    assert.doesNotMatch(page.html, /name="password"/, 'no password in a password-less workspace')
    before = sink.to(t.adminEmail).length
    page = await c.post(`/t/${t.slug}/account/confirm`, { method: 'send-code', next: 'totp' })
    assert.match(textOf(page.html), /We emailed you a 6-digit code/)
    const code = await sink.codeAfter(t.adminEmail, before)
    page = await c.post(`/t/${t.slug}/account/confirm`, {
      method: 'code',
      next: 'totp',
      code: '000000',
    })
    assert.equal(page.status, 401)
    assert.match(page.html, /id="code-error"[^>]*>That code is wrong/)
    page = await c.post(`/t/${t.slug}/account/confirm`, { method: 'code', next: 'totp', code })
    assert.match(textOf(page.html), /Set up an authenticator app/)
  })
})

describe('the JSON API is unchanged', () => {
  test('a form body to an API route is still 400 unsupported_media_type', async () => {
    const t = await createTenant(server)
    const res = await fetch(`${server.url}/v1/${t.slug}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${encodeURIComponent(t.adminEmail)}&password=${STRONG_PASSWORD}`,
    })
    assert.equal(res.status, 400)
    assert.equal((await res.json()).details.reason, 'unsupported_media_type')
  })
})

/**
 * The RFC 8176 `amr` of a browser's page session, which the hosted pages hand to the OpenID
 * provider as the sign-in's (web/pages/authorize.ts), read from its sealed cookie.
 */
function amrOf(c: PageClient, tenantId: string): string[] {
  const sealed = decodeURIComponent(c.cookies.get('ta_session') ?? '')
  return JSON.parse(server.deps.cipher.decrypt(sealed, `page-session:${tenantId}`)).amr
}

describe('getting back in (CONTRACT §9)', () => {
  test('reset a forgotten password with the mailed code; other sessions end', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = browser()
    await c.get(`/t/${t.slug}/reset-password`)
    const before = sink.to(user.email).length
    let page = await c.post(`/t/${t.slug}/reset-password`, { email: user.email })
    assert.match(textOf(page.html), /Choose a new password/)
    const code = await sink.codeAfter(user.email, before)
    const pending = hiddenValue(page.html, 'pending') ?? ''
    page = await c.post(`/t/${t.slug}/reset-password/confirm`, {
      pending,
      code: '000000',
      newPassword: 'quartz-harbor-lantern-58',
    })
    assert.equal(page.status, 401)
    assert.match(page.html, /id="code-error"[^>]*>That code is wrong/)
    page = await c.post(`/t/${t.slug}/reset-password/confirm`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code,
      newPassword: 'quartz-harbor-lantern-58',
    })
    assert.match(page.url, /\/account\?done=reset$/)
    assert.match(textOf(page.html), /Your new password is set/)
    // The mailed code proved the sign-in; the password just chosen proves nothing.
    assert.deepEqual(amrOf(c, t.tenantId), ['otp'])
    const old = await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
      refreshToken: user.refreshToken,
    })
    assert.equal(old.status, 401)
  })

  test('a reset of a user with an authenticator asks for its code, or a recovery code', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const secret = await enrolTotp(server, t.slug, user.accessToken)
    await setPolicy(t.slug, t.admin.accessToken, { mfaPolicy: 'Optional' })
    const c = browser()
    await c.get(`/t/${t.slug}/reset-password`)
    const before = sink.to(user.email).length
    let page = await c.post(`/t/${t.slug}/reset-password`, { email: user.email })
    const code = await sink.codeAfter(user.email, before)
    page = await c.post(`/t/${t.slug}/reset-password/confirm`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code,
      newPassword: 'quartz-harbor-lantern-58',
    })
    assert.match(textOf(page.html), /Your account has an authenticator app/)
    page = await c.post(`/t/${t.slug}/reset-password/confirm`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      totpCode: '000000',
    })
    assert.match(page.html, /id="totpCode-error"/)
    page = await c.post(`/t/${t.slug}/reset-password/confirm`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      totpCode: totpAt(server, secret),
    })
    assert.match(page.url, /done=reset$/)
    assert.deepEqual(amrOf(c, t.tenantId), ['otp', 'mfa'])
  })

  test('requireVerifiedEmail: sign-up and sign-in lead to the code page, which signs in', async () => {
    const t = await createTenant(server)
    await setPolicy(t.slug, t.admin.accessToken, { requireVerifiedEmail: true })
    const c = browser()
    await c.get(`/t/${t.slug}/sign-up`)
    const email = uniqueEmail('verify')
    let before = sink.to(email).length
    let page = await c.post(`/t/${t.slug}/sign-up`, { email, password: STRONG_PASSWORD })
    assert.match(page.url, /\/verify-email\?email=/)
    assert.match(textOf(page.html), /Verify your email address/)
    await sink.waitFor(email, before + 1)
    // Signing in before verifying mails a new code and comes back here.
    const other = browser()
    await other.get(`/t/${t.slug}/sign-in`)
    before = sink.to(email).length
    page = await other.post(`/t/${t.slug}/sign-in`, { email, password: STRONG_PASSWORD })
    assert.match(page.url, /\/verify-email\?email=/)
    const code = await sink.codeAfter(email, before)
    page = await other.post(`/t/${t.slug}/verify-email`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code,
    })
    assert.match(page.url, /\/account\?done=verified$/)
    assert.match(textOf(page.html), /Your email address is verified\..*verified/)
  })

  test('the verification page works in a browser that has no cookie yet; it names only an address', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const before = sink.to(user.email).length
    const asked = await server.request('POST', `/v1/${t.slug}/auth/request-email-verification`, {
      email: user.email,
    })
    assert.equal(asked.status, 200)
    const code = await sink.codeAfter(user.email, before)
    const c = browser()
    let page = await c.get(`/t/${t.slug}/verify-email?email=${encodeURIComponent(user.email)}`)
    page = await c.post(`/t/${t.slug}/verify-email`, {
      pending: hiddenValue(page.html, 'pending') ?? '',
      code,
    })
    assert.match(page.url, /done=verified$/)
    const bogus = await browser().get(
      `/t/${t.slug}/verify-email?email=${encodeURIComponent('<b>not an address')}`,
    )
    assert.match(bogus.url, /\/sign-in$/)
  })

  test('an unverified user verifies from the account page', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    const before = sink.to(user.email).length
    let page = await c.post(`/t/${t.slug}/account/verify`, {})
    const code = await sink.codeAfter(user.email, before)
    page = await c.post(`/t/${t.slug}/account/verify/confirm`, { code: '000000' })
    assert.equal(page.status, 401)
    page = await c.post(`/t/${t.slug}/account/verify/confirm`, { code })
    assert.match(textOf(page.html), /Your email address is verified/)
  })
})

describe('the account page (CONTRACT §9 parts)', () => {
  test('lists where the user is signed in, and signs out another device', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    const page = c.last?.html ?? ''
    assert.match(textOf(page), /Where you are signed in/)
    assert.match(textOf(page), /Firefox on Linux this device/)
    // The sign-up's session is the other one, the only one with a button of its own: this
    // device signs out with the page's one Sign out (issue 36).
    const other = /account\/sessions\/([0-9a-f-]{36})\/end"[\s\S]*?<\/li>/g
    const ids = [...page.matchAll(other)].map((m) => m[1])
    const me = await server.request('GET', `/v1/${t.slug}/me/sessions`, undefined, {
      token: user.accessToken,
    })
    const signupSession = me.body.items.find((s: { current: boolean }) => s.current).id
    assert.deepEqual(ids, [signupSession])
    const after = await c.post(`/t/${t.slug}/account/sessions/${signupSession}/end`, {})
    assert.match(textOf(after.html), /That session is signed out/)
    assert.equal(
      (
        await server.request('POST', `/v1/${t.slug}/auth/refresh`, {
          refreshToken: user.refreshToken,
        })
      ).status,
      401,
    )
  })

  test('new recovery codes need a code from the app, and are shown once', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const secret = await enrolTotp(server, t.slug, user.accessToken)
    const c = await signedIn(t.slug, user.email)
    let page = await c.post(`/t/${t.slug}/account/recovery-codes`, { regenerateTotp: '000000' })
    assert.match(page.html, /id="regenerateTotp-error"/)
    page = await c.post(`/t/${t.slug}/account/recovery-codes`, {
      regenerateTotp: totpAt(server, secret),
    })
    assert.equal(
      [...page.html.matchAll(/<li><code>[a-z2-7]{5}-[a-z2-7]{5}<\/code><\/li>/g)].length,
      10,
    )
  })

  test('downloads the personal data as a JSON attachment', async () => {
    const t = await createTenant(server)
    const user = await signup(server, t.slug)
    const c = await signedIn(t.slug, user.email)
    const page = await c.post(`/t/${t.slug}/account/export`, {})
    assert.equal(page.status, 200)
    assert.match(
      page.headers.get('content-disposition') ?? '',
      /attachment; filename="my-data.json"/,
    )
    const data = JSON.parse(page.html)
    assert.equal(data.user.email, user.email)
    assert.ok(Array.isArray(data.sessions) && data.sessions.length >= 2)
    assert.doesNotMatch(page.html, /argon2|\$argon/)
  })
})

describe("signing in through the tenant's identity provider", () => {
  test('the button leads to the provider and back to the account page, with a page session', async (t) => {
    const idp = await startOidcProvider()
    t.after(() => idp.close())
    const withIdp = await startTestServer(t, { idp: discoveryConfig(idp.issuer) })
    const tenant = await connectedTenant(withIdp, idp)
    const on = await withIdp.request(
      'PATCH',
      `/v1/${tenant.slug}/tenant`,
      { idpOauthEnabled: true },
      {
        token: tenant.admin.accessToken,
      },
    )
    assert.equal(on.status, 200)
    withIdp.deps.tenants.forget(tenant.slug)
    const c = new PageClient(withIdp, randomIp())
    const page = await c.get(`/t/${tenant.slug}/sign-in`)
    assert.match(page.html, new RegExp(`href="/t/${tenant.slug}/sign-in/idp"`))
    // The button: a 303 to the provider, and the flow's state remembered for the callback.
    const started = await fetch(`${withIdp.url}/t/${tenant.slug}/sign-in/idp`, {
      redirect: 'manual',
    })
    assert.equal(started.status, 303)
    const cookie = started.headers.getSetCookie().find((l) => l.startsWith('ta_idp=')) ?? ''
    assert.ok(cookie.includes(`Path=/v1/${tenant.slug}/oauth/idp/callback`), cookie)
    assert.ok(cookie.includes('HttpOnly') && cookie.includes('SameSite=Lax'), cookie)
    c.cookies.set('ta_idp', cookie.split(';')[0].slice('ta_idp='.length))
    const back = await idp.authorize(started.headers.get('location') ?? '', newAccount())
    const answered = await c.once('GET', back.pathname + back.search)
    // No authorization passes through this sign-in (web/http.ts, openerPolicy).
    assert.equal(answered.headers.get('cross-origin-opener-policy'), 'same-origin')
    const landed = await c.get(answered.headers.get('location') ?? '')
    assert.match(landed.url, /\/account$/)
    assert.ok(c.cookies.has('ta_session'))
    assert.ok(!c.cookies.has('ta_idp'), 'the handoff cookie is spent')
    // A refusal comes back to the sign-in page in words.
    const again = await fetch(`${withIdp.url}/t/${tenant.slug}/sign-in/idp`, { redirect: 'manual' })
    const c2 = new PageClient(withIdp, randomIp())
    const handoff = again.headers.getSetCookie().find((l) => l.startsWith('ta_idp=')) ?? ''
    c2.cookies.set('ta_idp', handoff.split(';')[0].slice('ta_idp='.length))
    const state = new URL(again.headers.get('location') ?? '').searchParams.get('state')
    const refused = await c2.get(
      `/v1/${tenant.slug}/oauth/idp/callback?error=access_denied&state=${state}`,
    )
    assert.match(refused.url, /\/sign-in\?idp=idp_error$/)
    assert.match(textOf(refused.html), /Your organisation’s sign-in was cancelled or refused/)
  })

  test('as the sign-in step of an authorization (https: the pages’ cookies at Path=/), the callback goes back to the interaction page, and no answer severs a popup’s window.opener', async (t) => {
    const idp = await startOidcProvider()
    t.after(() => idp.close())
    const publicUrl = 'https://auth.test'
    const withIdp = await startTestServer(t, { idp: discoveryConfig(idp.issuer), publicUrl })
    const tenant = await connectedTenant(withIdp, idp)
    const on = await withIdp.request(
      'PATCH',
      `/v1/${tenant.slug}/tenant`,
      { idpOauthEnabled: true },
      { token: tenant.admin.accessToken },
    )
    assert.equal(on.status, 200)
    withIdp.deps.tenants.forget(tenant.slug)
    const redirectUri = 'https://app.example.com/callback'
    const made = await createApplication(withIdp, tenant.slug, tenant.admin.accessToken, {
      name: 'Team Notes',
      type: 'web',
      redirectUris: [redirectUri],
      firstParty: true,
    })
    const config = await oidcClient(
      withIdp,
      tenant.slug,
      made.application.clientId,
      made.clientSecret,
    )
    const authorization = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: client.randomState(),
    })
    const local = (url: string) => url.replace(publicUrl, withIdp.url)
    const c = new PageClient(withIdp, randomIp())
    const toInteraction = await c.once('GET', local(authorization.href))
    const interaction = local(toInteraction.headers.get('location') ?? '')
    const toSignIn = await c.once('GET', interaction)
    assert.equal(toSignIn.headers.get('location'), `/t/${tenant.slug}/sign-in`)
    const started = await c.once('GET', `/t/${tenant.slug}/sign-in/idp`)
    assert.equal(started.status, 303)
    const back = await idp.authorize(started.headers.get('location') ?? '', newAccount())
    const answered = await c.once('GET', back.pathname + back.search)
    assert.equal(answered.status, 303)
    assert.equal(answered.headers.get('location'), new URL(interaction).pathname)
    assert.equal(answered.headers.get('cross-origin-opener-policy'), 'unsafe-none')
  })

  test('a state the cookie does not list comes back to the sign-in page, never as JSON', async (t) => {
    const idp = await startOidcProvider()
    t.after(() => idp.close())
    const withIdp = await startTestServer(t, { idp: discoveryConfig(idp.issuer) })
    const tenant = await connectedTenant(withIdp, idp)
    const mine = await fetch(`${withIdp.url}/t/${tenant.slug}/sign-in/idp`, { redirect: 'manual' })
    const cookie = mine.headers.getSetCookie().find((l) => l.startsWith('ta_idp=')) ?? ''
    // A flow begun elsewhere (the API directly), finished in this browser.
    const back = await roundTrip(withIdp, idp, tenant.slug, newAccount())
    const c = new PageClient(withIdp, randomIp())
    c.cookies.set('ta_idp', cookie.split(';')[0].slice('ta_idp='.length))
    const landed = await c.get(back.pathname + back.search)
    assert.match(landed.url, /\/sign-in\?idp=invalid_state$/)
    assert.match(landed.headers.get('content-type') ?? '', /^text\/html/)
    assert.ok(!c.cookies.has('ta_session'))
  })

  test('without the pages\u2019 cookie the callback answers its JSON as before', async (t) => {
    const idp = await startOidcProvider()
    t.after(() => idp.close())
    const withIdp = await startTestServer(t, { idp: discoveryConfig(idp.issuer) })
    const tenant = await connectedTenant(withIdp, idp)
    const back = await roundTrip(withIdp, idp, tenant.slug, newAccount())
    const res = await withIdp.request('GET', back.pathname + back.search)
    assert.equal(res.status, 200)
    assert.equal(typeof res.body.accessToken, 'string')
  })
})
