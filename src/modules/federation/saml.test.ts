// SAML is strict (CONTRACT §12): hostile responses, each refused with its own reason, built
// here with keys of the test's own and signed by xml-crypto. The wrapping cases follow the
// classic XSW1-8 (Somorovsky et al., "On Breaking SAML", 2012) as far as they apply to a
// Response, plus the hidden-in-Extensions variant of 2025.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { inflateRawSync } from 'node:zlib'
import {
  assertionXml,
  b64,
  idpKey,
  newId,
  type ResponseFields,
  responseXml,
  sign,
} from '../../../test/fixtures/saml-responses.ts'
import {
  authnRequestRedirect,
  SAML_CLOCK_SKEW_MS,
  SamlError,
  type SamlIdp,
  type SamlRefusal,
  spMetadataXml,
  validateSamlResponse,
} from './saml.ts'

const key = idpKey('Honest IdP')
const other = idpKey('Someone else')
const rolled = idpKey('Next IdP key')
const sp = {
  entityId: 'https://auth.example.test/v1/acme/sso/0b1c',
  acsUrl: 'https://auth.example.test/v1/acme/sso/0b1c/saml/acs',
}
const idp: SamlIdp = {
  idpEntityId: 'https://idp.example.test/metadata',
  idpSsoUrl: 'https://idp.example.test/sso',
  idpCertificates: [key.certificate],
}
const now = new Date('2026-11-27T07:00:00.000Z')
const requestId = newId()
const minutes = (n: number) => new Date(now.getTime() + n * 60_000)

function fields(over: Partial<ResponseFields> = {}): ResponseFields {
  return {
    responseId: newId(),
    assertionId: newId(),
    issuer: idp.idpEntityId,
    destination: sp.acsUrl,
    inResponseTo: requestId,
    scdInResponseTo: requestId,
    recipient: sp.acsUrl,
    audience: sp.entityId,
    issueInstant: now,
    notBefore: minutes(-1),
    notOnOrAfter: minutes(5),
    scdNotOnOrAfter: minutes(5),
    nameId: 'ada@corp.example',
    nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
    attributes: {},
    status: 'urn:oasis:names:tc:SAML:2.0:status:Success',
    ...over,
  }
}

/** A response whose assertion is signed by `key`, as most IdPs send it. */
function signedAssertionResponse(f = fields()): string {
  return responseXml(f, sign(assertionXml(f), f.assertionId, key))
}

const validate = (xml: string, at = now, cfg = idp) =>
  validateSamlResponse(cfg, sp, b64(xml), { requestId, now: at })

async function refused(xml: string, reason: SamlRefusal, at = now, cfg = idp): Promise<void> {
  await assert.rejects(validate(xml, at, cfg), (error: unknown) => {
    assert.ok(error instanceof SamlError, String(error))
    assert.equal(error.reason, reason)
    return true
  })
}

describe('SAML responses that are accepted', () => {
  test('an assertion signed by the configured certificate answers its identity', async () => {
    const f = fields({ attributes: { givenName: ['Ada'] } })
    const got = await validate(signedAssertionResponse(f))
    assert.deepEqual(got, {
      assertionId: f.assertionId,
      nameId: 'ada@corp.example',
      nameIdFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      email: 'ada@corp.example',
      attributes: { givenName: ['Ada'] },
      authnContextClassRef: 'urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport',
      mfa: false,
      notOnOrAfter: minutes(5),
    })
  })

  test('a multi-factor AuthnContext class is reported as mfa', async () => {
    const f = fields({ authnContext: 'https://refeds.org/profile/mfa' })
    const got = await validate(signedAssertionResponse(f))
    assert.equal(got.authnContextClassRef, 'https://refeds.org/profile/mfa')
    assert.equal(got.mfa, true)
  })

  test('a signed Response with an unsigned assertion is accepted', async () => {
    const f = fields()
    const xml = sign(responseXml(f, assertionXml(f)), f.responseId, key)
    assert.equal((await validate(xml)).assertionId, f.assertionId)
  })

  test('a signature by the second configured certificate is accepted (rollover)', async () => {
    const f = fields()
    const xml = responseXml(f, sign(assertionXml(f), f.assertionId, rolled))
    const both = { ...idp, idpCertificates: [key.certificate, rolled.certificate] }
    assert.equal((await validate(xml, now, both)).assertionId, f.assertionId)
  })

  test('RSA-SHA512 with a SHA-512 digest is accepted', async () => {
    const f = fields()
    const hash = { signature: 'sha512', digest: 'sha512' } as const
    const xml = responseXml(f, sign(assertionXml(f), f.assertionId, key, hash))
    assert.equal((await validate(xml)).assertionId, f.assertionId)
  })

  test('without an emailAddress NameID the email is the first of email, mail, the claim', async () => {
    const claim = 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress'
    const persistent = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent'
    const f = fields({
      nameId: 'u-42',
      nameIdFormat: persistent,
      attributes: { [claim]: ['c@corp.example'], mail: ['m@corp.example'] },
    })
    const got = await validate(signedAssertionResponse(f))
    assert.equal(got.email, 'm@corp.example')
    assert.equal(got.nameId, 'u-42')
    assert.equal(got.nameIdFormat, persistent)
    const onlyClaim = fields({
      nameId: 'u-42',
      nameIdFormat: persistent,
      attributes: { [claim]: ['c@corp.example'] },
    })
    assert.equal((await validate(signedAssertionResponse(onlyClaim))).email, 'c@corp.example')
  })

  test('a comment inside the NameID cannot cut the signed email short', async () => {
    const f = fields({ nameId: 'victim@corp.example<!---->.evil.example' })
    const got = await validate(signedAssertionResponse(f))
    assert.equal(got.email, 'victim@corp.example.evil.example')
  })
})

describe('SAML signatures are required, by a configured key, SHA-256 or stronger', () => {
  test('an unsigned response is refused', async () => {
    const f = fields()
    await refused(responseXml(f, assertionXml(f)), 'saml_unsigned')
  })

  test('an assertion signed by another key is refused', async () => {
    const f = fields()
    await refused(
      responseXml(f, sign(assertionXml(f), f.assertionId, other)),
      'saml_signature_invalid',
    )
  })

  test('a Response signed by another key is refused', async () => {
    const f = fields()
    await refused(
      sign(responseXml(f, assertionXml(f)), f.responseId, other),
      'saml_signature_invalid',
    )
  })

  test('a signed assertion changed after signing is refused', async () => {
    const xml = signedAssertionResponse().replace('ada@corp.example', 'eve@corp.example')
    await refused(xml, 'saml_signature_invalid')
  })

  for (const [signature, digest] of [
    ['sha1', 'sha1'],
    ['sha256', 'sha1'],
    ['sha1', 'sha256'],
  ] as const) {
    test(`RSA-${signature} with a ${digest} digest is refused`, async () => {
      const f = fields()
      const xml = responseXml(f, sign(assertionXml(f), f.assertionId, key, { signature, digest }))
      await refused(xml, 'saml_weak_algorithm')
    })
  }

  test('a response with no certificate configured is refused', async () => {
    await refused(signedAssertionResponse(), 'saml_signature_invalid', now, {
      ...idp,
      idpCertificates: [],
    })
  })
})

describe('SAML signature wrapping: a response holding any other assertion is refused whole', () => {
  const f = fields()
  const signed = sign(assertionXml(f), f.assertionId, key)
  const evilFields = fields({ assertionId: newId(), nameId: 'eve@corp.example' })
  const evil = assertionXml(evilFields)
  const signature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signed)?.[0] ?? ''
  // The forged assertion carrying a copy of the honest signature (XSW5, 6, 8).
  const evilWithSignature = evil.replace('</saml:Issuer>', `</saml:Issuer>${signature}`)
  const signedResponse = sign(responseXml(f, assertionXml(f)), f.responseId, key)
  const responseSignature = /<ds:Signature[\s\S]*<\/ds:Signature>/.exec(signedResponse)?.[0] ?? ''
  const evilResponse = (inside: string) =>
    responseXml({ ...evilFields, responseId: newId() }, evil).replace(
      '</saml:Issuer>',
      `</saml:Issuer>${inside}`,
    )
  const cases: Record<string, string> = {
    "XSW1: the signed Response inside the forged one's Signature": evilResponse(
      responseSignature.replace('</ds:Signature>', `${signedResponse}</ds:Signature>`),
    ),
    "XSW2: the signed Response beside the forged one's Signature": evilResponse(
      signedResponse + responseSignature,
    ),
    'XSW3: a forged assertion before the signed one': responseXml(f, evil + signed),
    'XSW3: a forged assertion after the signed one': responseXml(f, signed + evil),
    'XSW4: the signed assertion inside the forged one': responseXml(
      f,
      evil.replace(/<\/saml:Assertion>$/, `${signed}</saml:Assertion>`),
    ),
    'XSW5: a forged assertion with a copied signature, the signed one after': responseXml(
      f,
      evilWithSignature + signed,
    ),
    "XSW6: the signed assertion inside the forged one's copied Signature": responseXml(
      f,
      evilWithSignature.replace('</ds:Signature>', `${signed}</ds:Signature>`),
    ),
    'XSW7: the signed assertion in Extensions, a forged one in its place': responseXml(
      f,
      `<samlp:Extensions>${signed}</samlp:Extensions>${evil}`,
    ),
    "XSW8: the signed assertion in an Object of the forged one's Signature": responseXml(
      f,
      evilWithSignature.replace(
        '</ds:Signature>',
        `<ds:Object>${signed}</ds:Object></ds:Signature>`,
      ),
    ),
    'the signed assertion in Extensions, a forged copy with its ID and signature outside':
      responseXml(
        f,
        `<samlp:Extensions>${signed}</samlp:Extensions>${evilWithSignature.replace(evilFields.assertionId, f.assertionId)}`,
      ),
    'the signed assertion alone, but not a child of the Response': responseXml(
      f,
      `<samlp:Extensions>${signed}</samlp:Extensions>`,
    ),
  }
  for (const [name, xml] of Object.entries(cases)) {
    test(name, async () => {
      await refused(xml, 'saml_wrapped')
    })
  }
})

describe('SAML conditions: issuer, audience, recipient, destination, request, time', () => {
  const cases: [string, Partial<ResponseFields>, SamlRefusal][] = [
    ['another issuer', { issuer: 'https://evil.example.test/metadata' }, 'saml_issuer'],
    [
      'another audience',
      { audience: 'https://auth.example.test/v1/other/sso/0b1c' },
      'saml_audience',
    ],
    [
      'another recipient',
      { recipient: 'https://auth.example.test/v1/other/sso/0b1c/saml/acs' },
      'saml_recipient',
    ],
    [
      'another destination',
      { destination: 'https://auth.example.test/elsewhere' },
      'saml_destination',
    ],
    ['no destination', { destination: null }, 'saml_destination'],
    ['another request (Response)', { inResponseTo: newId() }, 'saml_in_response_to'],
    [
      'another request (SubjectConfirmationData)',
      { scdInResponseTo: newId() },
      'saml_in_response_to',
    ],
    [
      'IdP-initiated (no InResponseTo)',
      { inResponseTo: null, scdInResponseTo: null },
      'saml_unsolicited',
    ],
    [
      'IdP-initiated, SubjectConfirmationData unbound',
      { scdInResponseTo: null },
      'saml_unsolicited',
    ],
    ['Conditions expired', { notOnOrAfter: minutes(-4) }, 'saml_expired'],
    ['SubjectConfirmationData expired', { scdNotOnOrAfter: minutes(-4) }, 'saml_expired'],
    ['no Conditions NotOnOrAfter', { notOnOrAfter: null }, 'saml_expired'],
    ['no SubjectConfirmationData NotOnOrAfter', { scdNotOnOrAfter: null }, 'saml_expired'],
    ['not yet valid', { notBefore: minutes(4) }, 'saml_not_yet_valid'],
    [
      'an IdP error status',
      { status: 'urn:oasis:names:tc:SAML:2.0:status:Responder' },
      'saml_idp_status',
    ],
    [
      'no email',
      { nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent' },
      'saml_no_email',
    ],
  ]
  for (const [name, over, reason] of cases) {
    test(`${name} is refused (${reason})`, async () => {
      await refused(signedAssertionResponse(fields(over)), reason)
    })
  }

  test('the clock skew is 3 minutes each way, to the millisecond', async () => {
    const f = fields({
      notBefore: minutes(1),
      notOnOrAfter: minutes(2),
      scdNotOnOrAfter: minutes(2),
    })
    const xml = signedAssertionResponse(f)
    const at = (ms: number) => new Date(ms)
    const notBefore = minutes(1).getTime()
    const end = minutes(2).getTime()
    await validate(xml, at(notBefore - SAML_CLOCK_SKEW_MS))
    await refused(xml, 'saml_not_yet_valid', at(notBefore - SAML_CLOCK_SKEW_MS - 1))
    await validate(xml, at(end + SAML_CLOCK_SKEW_MS - 1))
    await refused(xml, 'saml_expired', at(end + SAML_CLOCK_SKEW_MS))
  })

  test('a DTD, a non-Response and bytes that are not XML are refused as malformed', async () => {
    const xml = signedAssertionResponse()
    await refused(`<!DOCTYPE r [<!ENTITY e "x">]>${xml}`, 'saml_malformed')
    await refused(assertionXml(fields()), 'saml_malformed')
    await refused('<samlp:Response', 'saml_malformed')
  })
})

describe('SAML requests and metadata', () => {
  test('the AuthnRequest is unsigned, by HTTP-Redirect, asks for an emailAddress NameID', async () => {
    const { url, requestId: id } = await authnRequestRedirect(
      { ...idp, idpSsoUrl: 'https://idp.example.test/sso?tenant=1' },
      sp,
      'state-1',
    )
    const u = new URL(url)
    assert.equal(u.origin + u.pathname, 'https://idp.example.test/sso')
    assert.equal(u.searchParams.get('tenant'), '1')
    assert.equal(u.searchParams.get('RelayState'), 'state-1')
    assert.equal(u.searchParams.get('Signature'), null)
    assert.match(id, /^_[0-9a-f]{40}$/)
    const xml = inflateRawSync(
      Buffer.from(u.searchParams.get('SAMLRequest') ?? '', 'base64'),
    ).toString()
    assert.match(xml, new RegExp(`ID="${id}"`))
    assert.match(
      xml,
      /AssertionConsumerServiceURL="https:\/\/auth\.example\.test\/v1\/acme\/sso\/0b1c\/saml\/acs"/,
    )
    assert.match(xml, /ProtocolBinding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-POST"/)
    assert.match(xml, /Format="urn:oasis:names:tc:SAML:1\.1:nameid-format:emailAddress"/)
    assert.match(xml, /<saml:Issuer[^>]*>https:\/\/auth\.example\.test\/v1\/acme\/sso\/0b1c</)
    assert.doesNotMatch(xml, /Signature/)
  })

  test('the SP metadata names our entityID and the HTTP-POST ACS', () => {
    const xml = spMetadataXml(sp)
    assert.match(xml, /entityID="https:\/\/auth\.example\.test\/v1\/acme\/sso\/0b1c"/)
    assert.match(
      xml,
      /Binding="urn:oasis:names:tc:SAML:2\.0:bindings:HTTP-POST" Location="https:\/\/auth\.example\.test\/v1\/acme\/sso\/0b1c\/saml\/acs"/,
    )
    assert.match(xml, /AuthnRequestsSigned="false"/)
  })
})
