// CONTRACT §16: with an https PUBLIC_URL every cookie the hosted pages and their flows set
// carries the `__Host-` prefix (so Secure, `Path=/`, no Domain), with the tenant in its name:
// the page session and CSRF secret, the OpenID provider's sign-in mark (`ta_oidc_sign_in`,
// which lived at /oidc/{slug}), the SSO flow and SAML request cookies (which lived at the
// connection's routes) and the identity provider handoff (at its callback). Each flow still
// works with its cookie at `/`.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { connectedTenant, discoveryConfig, newAccount } from '../fixtures/oauth.ts'
import { randomIp, STRONG_PASSWORD, startTestServer } from '../helpers.ts'
import { startOidcProvider } from '../oidc-provider.ts'
import { PageClient } from './page-client.ts'

const CERT = readFileSync(
  new URL('../fixtures/sso/idp-signing.pem', import.meta.url),
  'utf8',
).trim()

test('host cookies: on https every cookie the sign-in flows set is __Host- with Path=/, Secure, no Domain, the tenant in its name', async (t) => {
  const idp = await startOidcProvider()
  t.after(() => idp.close())
  const server = await startTestServer(t, {
    publicUrl: 'https://auth.example.com',
    idp: discoveryConfig(idp.issuer),
  })
  const tenant = await connectedTenant(server, idp)
  const admin = { token: tenant.admin.accessToken }
  const on = await server.request(
    'PATCH',
    `/v1/${tenant.slug}/tenant`,
    { idpOauthEnabled: true },
    admin,
  )
  assert.equal(on.status, 200, JSON.stringify(on.body))
  server.deps.tenants.forget(tenant.slug)
  const saml = await server.request(
    'POST',
    `/v1/${tenant.slug}/sso-connections`,
    {
      name: 'Entra',
      type: 'saml',
      domains: [`corp-${tenant.slug}.example.com`],
      saml: {
        idpEntityId: 'https://sts.example.net/abc/',
        idpSsoUrl: 'https://login.example.net/abc/saml2',
        idpCertificates: [CERT],
      },
    },
    admin,
  )
  assert.equal(saml.status, 200, JSON.stringify(saml.body))
  const samlId = saml.body.connection.id

  const lines: string[] = []
  const c = new PageClient(server, randomIp())
  const step = async (method: string, url: string, fields?: Record<string, string>) => {
    const res = await c.once(method, url, fields)
    lines.push(...res.headers.getSetCookie())
    return res
  }
  // The landing page, the sign-in page, a password sign-in, the account page, a sign-out.
  await step('GET', '/')
  await step('GET', `/t/${tenant.slug}/sign-in`)
  // The language picker's choice, remembered (CONTRACT §20).
  await step('GET', `/t/${tenant.slug}/sign-in?lang=de`)
  await step('GET', `/t/${tenant.slug}/sign-in?lang=en`)
  const page = await c.get(`/t/${tenant.slug}/sign-in`)
  assert.equal(page.status, 200)
  const signedIn = await step('POST', `/t/${tenant.slug}/sign-in`, {
    _csrf: c.csrf(),
    email: tenant.adminEmail,
    password: STRONG_PASSWORD,
  })
  assert.equal(signedIn.status, 303)
  const account = await c.get(`/t/${tenant.slug}/account`)
  assert.match(account.url, /\/account$/)
  await step('POST', `/t/${tenant.slug}/sign-out`, { _csrf: c.csrf() })
  // SAML SSO: the hosted page notes the flow, the start route the outstanding request.
  const sso = await step('GET', `/t/${tenant.slug}/sso/${samlId}`)
  assert.equal(sso.status, 303)
  const start = await step('GET', sso.headers.get('location') ?? '')
  assert.equal(start.status, 303)
  assert.match(start.headers.get('location') ?? '', /^https:\/\/login\.example\.net\//)
  // The SPEC idp: the button remembers the state; the callback spends it and signs in.
  const idpStart = await step('GET', `/t/${tenant.slug}/sign-in/idp`)
  assert.equal(idpStart.status, 303)
  const back = await idp.authorize(idpStart.headers.get('location') ?? '', newAccount())
  const landed = await step('GET', back.pathname + back.search)
  assert.equal(landed.status, 303, 'the callback hands the browser to the pages')
  assert.match(landed.headers.get('location') ?? '', /\/account$/)
  assert.match((await c.get(`/t/${tenant.slug}/account`)).url, /\/account$/, 'signed in by idp')

  const names = new Set<string>()
  for (const line of lines) {
    const name = line.slice(0, line.indexOf('='))
    names.add(name)
    assert.ok(name.startsWith('__Host-'), `${line}: no __Host- prefix`)
    assert.match(line, /; Path=\/(;|$)/, `${line}: Path=/`)
    assert.match(line, /; Secure(;|$)/, `${line}: Secure`)
    assert.doesNotMatch(line, /domain=/i, line)
    if (name !== '__Host-ta_landing_csrf') assert.ok(name.includes(tenant.slug), `${name}: tenant`)
  }
  for (const expected of [
    `__Host-ta_session_${tenant.slug}`,
    `__Host-ta_csrf_${tenant.slug}`,
    `__Host-ta_oidc_sign_in_${tenant.slug}`,
    `__Host-ta_sso_flow_${tenant.slug}_${samlId}`,
    `__Host-ta_saml_${tenant.slug}_${samlId}`,
    `__Host-ta_idp_${tenant.slug}`,
    `__Host-ta_lang_${tenant.slug}`,
  ]) {
    assert.ok(names.has(expected), `${expected} among ${[...names].join(', ')}`)
  }
  // The SAML request cookie must come back with the IdP's cross-site POST.
  const samlLine = lines.find((l) => l.startsWith(`__Host-ta_saml_${tenant.slug}_`)) ?? ''
  assert.match(samlLine, /SameSite=None/)
})
