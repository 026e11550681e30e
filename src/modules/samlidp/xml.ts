// The XML of the SAML IdP: one parser (no DOCTYPE, so no entity expansion; a size bound
// before anything is read) and the namespaces.
import { DOMParser } from '@xmldom/xmldom'

export const SAMLP = 'urn:oasis:names:tc:SAML:2.0:protocol'
export const SAML = 'urn:oasis:names:tc:SAML:2.0:assertion'
export const MD = 'urn:oasis:names:tc:SAML:2.0:metadata'
export const DS = 'http://www.w3.org/2000/09/xmldsig#'
export const REDIRECT_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect'
export const POST_BINDING = 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'
export const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256'
export const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256'
export const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#'
export const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature'

/** An AuthnRequest is a few KiB: anything past this is refused unread. */
export const MAX_REQUEST_BYTES = 64 * 1024

/** The parsed document, or undefined when it is not well-formed or has a DOCTYPE. */
export function parseXml(xml: string): Document | undefined {
  if (xml.length > MAX_REQUEST_BYTES || /<!DOCTYPE/i.test(xml)) return undefined
  let broken = false
  const document = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: () => {
        broken = true
      },
      fatalError: () => {
        broken = true
      },
    },
  }).parseFromString(xml, 'application/xml')
  return broken || !document?.documentElement ? undefined : (document as unknown as Document)
}

/** The element's own children in namespace `ns` named `name`. */
export function childElements(parent: Element, ns: string, name: string): Element[] {
  const found: Element[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    const element = node as Element
    if (node.nodeType === 1 && element.namespaceURI === ns && element.localName === name) {
      found.push(element)
    }
  }
  return found
}
