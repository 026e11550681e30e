// Passkeys end to end in headless Chromium with a virtual authenticator (CDP WebAuthn
// domain): the browser's own navigator.credentials.create/get, through
// @simplewebauthn/browser, against the real service. WebAuthn needs a secure context and a
// domain RP ID, so the page is served from http://localhost:<port> (localhost is secure):
// test/fixtures/secure-origin.ts.
// Needs /usr/bin/chromium (Debian's `chromium` package); skipped without it.
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { auditRows } from '../../../test/db.ts'
import {
  CHROMIUM,
  launchChromium,
  pageWithAuthenticator,
  startBehindLocalhost,
} from '../../../test/fixtures/secure-origin.ts'
import { createTenant, signup } from '../../../test/helpers.ts'

const BUNDLE = join(
  import.meta.dirname,
  '../../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js',
)

// Runs in the page: the JSON API on the page's own origin.
const API = `
window.api = async (slug, path, body, token) => {
  const headers = { 'content-type': 'application/json' }
  if (token) headers.authorization = 'Bearer ' + token
  const r = await fetch('/v1/' + slug + '/' + path, {
    method: body === null ? 'GET' : 'POST',
    headers,
    body: body === null ? undefined : JSON.stringify(body),
  })
  return { status: r.status, body: await r.json() }
}`

interface Answer {
  status: number
  body: Record<string, any>
}

test('a passkey made by Chromium registers, and signs in with and without an email', {
  skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: apt-get install -y chromium`,
}, async (t) => {
  // The origin first (its port names PUBLIC_URL), then the service behind it.
  const { server, publicUrl } = await startBehindLocalhost(t)
  const tenant = await createTenant(server)
  const user = await signup(server, tenant.slug)
  const browser = await launchChromium(t)
  const { page, cdp, authenticatorId } = await pageWithAuthenticator(browser)
  // Any page of the origin will do: the service's /health.
  await page.goto(`${publicUrl}/health`)
  assert.equal(await page.evaluate('window.isSecureContext'), true)
  await page.addScriptTag({ path: BUNDLE })
  await page.addScriptTag({ content: API })

  // Registration: options, navigator.credentials.create, the response to the service.
  const registered = (await page.evaluate(
    async ({ slug, token }) => {
      const w = window as any
      const options = await w.api(slug, 'me/passkeys/registration-options', {}, token)
      if (options.status !== 200) return options
      const response = await w.SimpleWebAuthnBrowser.startRegistration({
        optionsJSON: options.body,
      })
      return w.api(slug, 'me/passkeys', { response, name: 'Chromium' }, token)
    },
    { slug: tenant.slug, token: user.accessToken },
  )) as Answer
  assert.equal(registered.status, 200, JSON.stringify(registered.body))
  assert.equal(registered.body.name, 'Chromium')
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId })
  assert.equal(credentials.length, 1)
  assert.equal(credentials[0].isResidentCredential, true)
  assert.equal(credentials[0].rpId, 'localhost')

  // Signed out: the session of the sign-up ends.
  const out = await server.request('POST', `/v1/${tenant.slug}/auth/logout`, {
    refreshToken: user.refreshToken,
  })
  assert.equal(out.status, 200)

  // Sign-in, with the email (allowCredentials) and without (a discoverable credential).
  for (const email of [user.email, undefined]) {
    const signedIn = (await page.evaluate(
      async ({ slug, email }) => {
        const w = window as any
        const options = await w.api(slug, 'auth/passkey/options', email ? { email } : {})
        if (options.status !== 200) return options
        const response = await w.SimpleWebAuthnBrowser.startAuthentication({
          optionsJSON: options.body,
        })
        const verified = await w.api(slug, 'auth/passkey/verify', { response })
        if (verified.status !== 200) return verified
        return w.api(slug, 'me', null, verified.body.accessToken)
      },
      { slug: tenant.slug, email },
    )) as Answer
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body))
    assert.equal(signedIn.body.id, user.user.id)
  }

  const logins = (await auditRows(server, tenant.tenantId, 'UserLogin')).filter(
    (r) => r.metadata.method === 'passkey',
  )
  assert.equal(logins.length, 2)
  const listed = await server.request('GET', `/v1/${tenant.slug}/me/passkeys`, undefined, {
    token: (
      await server.request('POST', `/v1/${tenant.slug}/auth/login`, {
        email: user.email,
        password: user.password,
      })
    ).body.accessToken,
  })
  assert.ok(listed.body.items[0].lastUsedAt)
})
