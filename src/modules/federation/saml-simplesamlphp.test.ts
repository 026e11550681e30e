// Our AuthnRequest and response validation against a real IdP nobody here wrote:
// SimpleSAMLphp (test/fixtures/simplesamlphp.ts). A person is played by plain HTTP here
// (cookies kept, redirects followed, the login form posted); the browser round trip through
// the hosted pages is test/web/saml-browser.test.ts.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  type SimpleSamlIdp,
  SSP_USERS,
  signInAtSimpleSaml,
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

test('SimpleSAMLphp signs a person in: its response to our AuthnRequest validates', async () => {
  const { url, requestId } = await authnRequestRedirect(idp, sp, 'relay-1')
  const got = await signInAtSimpleSaml(ssp, url)
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
  const { samlResponse } = await signInAtSimpleSaml(ssp, url, SSP_USERS[1])
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
