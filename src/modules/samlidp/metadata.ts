// The IdP metadata of a tenant (SAML Metadata §2.4.3, IDPSSODescriptor) at
// `{PUBLIC_URL}/saml/{slug}/metadata`, which is also the IdP's entity id: every signing
// certificate (rotation: the next key is published before it signs), the NameID formats
// the service issues and the SSO endpoint for both bindings AuthnRequests arrive by.
import { DOMImplementation, XMLSerializer } from '@xmldom/xmldom'
import { certificateBody, type SamlSigningKey } from './keys.ts'
import { NAMEID_FORMATS } from './sp-metadata.ts'
import { DS, MD, POST_BINDING, REDIRECT_BINDING, SAMLP } from './xml.ts'

export interface IdpEndpoints {
  entityId: string
  ssoUrl: string
}

export const idpEndpoints = (publicUrl: string, slug: string): IdpEndpoints => ({
  entityId: `${publicUrl}/saml/${slug}/metadata`,
  ssoUrl: `${publicUrl}/saml/${slug}/sso`,
})

export function idpMetadataXml(endpoints: IdpEndpoints, keys: SamlSigningKey[]): string {
  const document = new DOMImplementation().createDocument(MD, 'md:EntityDescriptor', null)
  const root = document.documentElement as unknown as Element
  root.setAttributeNS('http://www.w3.org/2000/xmlns/', 'xmlns:ds', DS)
  root.setAttribute('entityID', endpoints.entityId)
  const el = (parent: Element, ns: string, name: string, attrs: Record<string, string> = {}) => {
    const child = document.createElementNS(ns, name) as unknown as Element
    for (const [key, value] of Object.entries(attrs)) child.setAttribute(key, value)
    parent.appendChild(child)
    return child
  }
  const idp = el(root, MD, 'md:IDPSSODescriptor', {
    WantAuthnRequestsSigned: 'false',
    protocolSupportEnumeration: SAMLP,
  })
  for (const key of keys) {
    const descriptor = el(idp, MD, 'md:KeyDescriptor', { use: 'signing' })
    const data = el(el(descriptor, DS, 'ds:KeyInfo'), DS, 'ds:X509Data')
    el(data, DS, 'ds:X509Certificate').appendChild(
      document.createTextNode(certificateBody(key.certificate)) as unknown as Node,
    )
  }
  for (const format of Object.values(NAMEID_FORMATS)) {
    el(idp, MD, 'md:NameIDFormat').appendChild(document.createTextNode(format) as unknown as Node)
  }
  for (const binding of [REDIRECT_BINDING, POST_BINDING]) {
    el(idp, MD, 'md:SingleSignOnService', { Binding: binding, Location: endpoints.ssoUrl })
  }
  return new XMLSerializer().serializeToString(document as unknown as Node)
}
