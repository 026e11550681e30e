// The tenant's SAML signing keys (CONTRACT §22, SAML IdP): the RSA keys of OIDC_SIGNING_KEYS,
// newest first, the first of which signs (RSA-SHA256), all published in the IdP metadata so
// an SP that reads it again follows a rotation. SAML SPs take keys as X.509 certificates, so
// each key gets a self-signed one per tenant, encoded here (DER, RFC 5280 §4.1: a v3
// certificate without extensions; Node has no certificate builder, and the one maintained
// library, @peculiar/x509, needs a global reflect polyfill) and deterministic: PKCS#1 v1.5
// signatures, a serial from a hash of (tenant, key) and fixed validity, so every instance
// and every restart publishes the same bytes. SPs do not check an IdP certificate's dates
// or chain, only the key in it (SAML V2.0 Metadata Interoperability profile §2.5.1).
import { createHash, createPrivateKey, createPublicKey, sign } from 'node:crypto'

export interface SamlSigningKey {
  /** The PEM private key (xml-crypto signs with it). */
  privateKey: string
  /** Its self-signed certificate for this tenant (PEM). */
  certificate: string
}

/** DER: a tag and its content, with the length in short or long form. */
function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content)
  const n = body.length
  const length =
    n < 0x80
      ? Buffer.from([n])
      : n < 0x100
        ? Buffer.from([0x81, n])
        : n < 0x10000
          ? Buffer.from([0x82, n >> 8, n & 0xff])
          : Buffer.from([0x83, n >> 16, (n >> 8) & 0xff, n & 0xff])
  return Buffer.concat([Buffer.from([tag]), length, body])
}
const seq = (...content: Buffer[]) => der(0x30, ...content)
/** sha256WithRSAEncryption (RFC 4055 §5) with its NULL parameters. */
const SHA256_WITH_RSA = seq(
  der(0x06, Buffer.from([0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b])),
  der(0x05),
)
const commonName = (cn: string) =>
  seq(der(0x31, seq(der(0x06, Buffer.from([0x55, 0x04, 0x03])), der(0x0c, Buffer.from(cn)))))
/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
const UTC_2020 = der(0x17, Buffer.from('200101000000Z'))
const GENERALIZED_2120 = der(0x18, Buffer.from('21200101000000Z'))

/** The RSA keys among OIDC_SIGNING_KEYS, newest first. */
export function rsaSigningPems(pems: string[]): string[] {
  return pems.filter((pem) => createPrivateKey(pem).asymmetricKeyType === 'rsa')
}

const cache = new Map<string, SamlSigningKey>()

function certificateFor(pem: string, tenantId: string): SamlSigningKey {
  const key = createPrivateKey(pem)
  const serial = createHash('sha256').update(`${tenantId}\n`).update(pem).digest().subarray(0, 16)
  serial[0] = (serial[0] & 0x7f) | 0x01 // positive, 16 octets (RFC 5280 §4.1.2.2)
  const name = commonName(`tenant-auth SAML IdP ${tenantId}`)
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([0x02]))), // v3
    der(0x02, serial),
    SHA256_WITH_RSA,
    name,
    seq(UTC_2020, GENERALIZED_2120),
    name,
    createPublicKey(key).export({ type: 'spki', format: 'der' }),
  )
  const signature = sign('sha256', tbs, key)
  const certificate = seq(tbs, SHA256_WITH_RSA, der(0x03, Buffer.from([0]), signature))
  const lines = certificate.toString('base64').match(/.{1,64}/g) ?? []
  return {
    privateKey: key.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificate: `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----`,
  }
}

/** The tenant's signing keys, the signing one first (empty: no RSA key, no SAML IdP). */
export function samlSigningKeys(pems: string[], tenantId: string): SamlSigningKey[] {
  return rsaSigningPems(pems).map((pem) => {
    const id = `${tenantId}:${createHash('sha256').update(pem).digest('hex')}`
    let found = cache.get(id)
    if (!found) {
      if (cache.size > 10_000) cache.clear()
      found = certificateFor(pem, tenantId)
      cache.set(id, found)
    }
    return found
  })
}

/** A certificate's base64 body, as metadata and KeyInfo carry it. */
export function certificateBody(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, '').replace(/\s+/g, '')
}
