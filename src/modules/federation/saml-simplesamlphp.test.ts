// Our AuthnRequest and response validation against a real IdP nobody here wrote:
// SimpleSAMLphp (test/fixtures/simplesamlphp.ts). A person is played by plain HTTP here
// (cookies kept, redirects followed, the login form posted); the browser round trip through
// the hosted pages is test/web/saml-browser.test.ts.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  type SimpleSamlIdp,
  SSP_USERS,
  startSimpleSamlPhp,
} from '../../../test/fixtures/simplesamlphp.ts'
import { authnRequestRedirect, SamlError, type SamlIdp, validateSamlResponse } from './saml.ts'

let ssp: SimpleSamlIdp
let idp: SamlIdp
const sp = {
  entityId: 'https://auth.example.test/v1/acme/sso/5f0e',
  acsUrl: 'https://auth.example.test/v1/acme/sso/5f0e/saml/acs',
}

before(async () => {
  ssp = await startSimpleSamlPhp()
  ssp.registerSp(sp)
  idp = { idpEntityId: ssp.entityId, idpSsoUrl: ssp.ssoUrl, idpCertificates: [ssp.certificate] }
})

after(async () => {
  await ssp?.stop()
})

/** A person with a cookie jar: follows redirects, answers the login form. */
async function signInAtIdp(
  start: string,
  user = SSP_USERS[0],
): Promise<{ samlResponse: string; relayState: string; action: string }> {
  const jar = new Map<string, string>()
  const go = async (
    url: string,
    init: RequestInit = {},
  ): Promise<{ url: string; html: string }> => {
    for (let hops = 0; hops < 10; hops++) {
      const res = await fetch(url, {
        ...init,
        redirect: 'manual',
        headers: {
          ...(init.headers as Record<string, string>),
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        },
      })
      for (const cookie of res.headers.getSetCookie()) {
        const [pair] = cookie.split(';')
        const eq = pair.indexOf('=')
        jar.set(pair.slice(0, eq), pair.slice(eq + 1))
      }
      const location = res.headers.get('location')
      if (res.status >= 300 && res.status < 400 && location) {
        url = new URL(location, url).toString()
        init = {}
        continue
      }
      return { url, html: await res.text() }
    }
    throw new Error('too many redirects')
  }
  const login = await go(start)
  const authState = /name="AuthState" value="([^"]+)"/.exec(login.html)?.[1]
  assert.ok(authState, `no login form:\n${login.html.slice(0, 2000)}\n${ssp.log()}`)
  const action = /<form[^>]*action="([^"]*)"/.exec(login.html)?.[1] ?? ''
  const posted = await go(
    new URL(action.replace(/&amp;/g, '&') || login.url, login.url).toString(),
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        username: user.username,
        password: user.password,
        AuthState: decodeEntities(authState),
      }).toString(),
    },
  )
  const field = (name: string) =>
    decodeEntities(new RegExp(`name="${name}" value="([^"]*)"`).exec(posted.html)?.[1] ?? '')
  const samlResponse = field('SAMLResponse')
  assert.ok(samlResponse, `no SAMLResponse:\n${posted.html.slice(0, 2000)}\n${ssp.log()}`)
  return {
    samlResponse,
    relayState: field('RelayState'),
    action: decodeEntities(/<form[^>]*action="([^"]*)"/.exec(posted.html)?.[1] ?? ''),
  }
}

function decodeEntities(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#0?39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

test('SimpleSAMLphp signs a person in: its response to our AuthnRequest validates', async () => {
  const { url, requestId } = await authnRequestRedirect(idp, sp, 'relay-1')
  const got = await signInAtIdp(url)
  assert.equal(got.action, sp.acsUrl)
  assert.equal(got.relayState, 'relay-1')
  const assertion = await validateSamlResponse(idp, sp, got.samlResponse, {
    requestId,
    now: new Date(),
  })
  assert.equal(assertion.email, 'ada@corp.example')
  assert.equal(assertion.nameId, 'ada@corp.example')
  assert.equal(assertion.nameIdFormat, 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress')
  assert.deepEqual(assertion.attributes.email, ['ada@corp.example'])
  assert.match(assertion.assertionId, /^_/)
  assert.ok(assertion.notOnOrAfter.getTime() > Date.now())
})

test("SimpleSAMLphp's response is refused for another request, another SP, another certificate", async () => {
  const { url, requestId } = await authnRequestRedirect(idp, sp, 'relay-2')
  const { samlResponse } = await signInAtIdp(url, SSP_USERS[1])
  const reason = async (p: Promise<unknown>) => {
    const error = await p.then(
      () => assert.fail('accepted'),
      (e: unknown) => e,
    )
    assert.ok(error instanceof SamlError, String(error))
    return error.reason
  }
  const now = new Date()
  assert.equal(
    await reason(validateSamlResponse(idp, sp, samlResponse, { requestId: '_other', now })),
    'saml_in_response_to',
  )
  const otherSp = { entityId: `${sp.entityId}0`, acsUrl: sp.acsUrl }
  assert.equal(
    await reason(validateSamlResponse(idp, otherSp, samlResponse, { requestId, now })),
    'saml_audience',
  )
  const { idpKey } = await import('../../../test/fixtures/saml-responses.ts')
  const wrongCert = { ...idp, idpCertificates: [idpKey().certificate] }
  assert.equal(
    await reason(validateSamlResponse(wrongCert, sp, samlResponse, { requestId, now })),
    'saml_signature_invalid',
  )
  const later = new Date(Date.now() + 60 * 60_000)
  assert.equal(
    await reason(validateSamlResponse(idp, sp, samlResponse, { requestId, now: later })),
    'saml_expired',
  )
  assert.equal(
    (await validateSamlResponse(idp, sp, samlResponse, { requestId, now })).email,
    'bob@corp.example',
  )
})
