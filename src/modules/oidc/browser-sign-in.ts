// Which service session the browser is signed in with, as the tenant's OpenID provider
// sees it (CONTRACT §11, Sign-in). The hosted pages' session cookie is theirs alone (sealed
// for the pages), so the provider, at /oidc/{slug}, does not read it; each sign-in on the hosted
// pages therefore also writes this cookie (signInCookie: `__Host-` on https), the service session id
// sealed to the tenant, and each sign-out clears it. The provider reuses its own session
// only while it was signed in from that very service session: when another user (or the
// same one, anew) signs in on the hosted pages, the provider's earlier session is never
// used again, and the next authorization goes through the hosted pages, which sign the
// provider in as the page's user (oidc-provider ends the previous account's session first).
import type { FieldCipher } from '../../lib/crypto.ts'
import { type HostCookie, hostCookie } from '../../lib/host-cookie.ts'

export const SIGN_IN_COOKIE = 'ta_oidc_sign_in'

/**
 * The field of a login result (the hosted pages' interactionResult) that names the service
 * session the user signed in with, and the provider session's field that keeps it
 * (provider.ts, hostedSessionCheck; organizations.ts reads its second factor).
 */
export const SERVICE_SESSION = 'serviceSessionId'

/**
 * The cookie: over https `__Host-ta_oidc_sign_in_{slug}` with `Path=/` (CONTRACT §16), so the
 * provider at /oidc/{slug} receives it like every page; over http at the issuer's path.
 */
export function signInCookie(publicUrl: string, slug: string): HostCookie {
  return hostCookie(publicUrl, SIGN_IN_COOKIE, [slug], issuerPath(publicUrl, slug))
}

/** The path of the tenant's issuer, {PUBLIC_URL}/oidc/{slug}, as the browser requests it. */
export function issuerPath(publicUrl: string, slug: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/oidc/${slug}`
}

const aad = (tenantId: string) => `oidc-sign-in:${tenantId}`

export function sealSignIn(cipher: FieldCipher, tenantId: string, sessionId: string): string {
  return cipher.encrypt(sessionId, aad(tenantId))
}

/**
 * The service session id in the cookie's value as the browser sent it (URI-encoded, as the
 * hosted pages write cookies), or undefined (absent, tampered, another tenant's).
 */
export function openSignIn(
  cipher: FieldCipher,
  tenantId: string,
  sealed: string | undefined,
): string | undefined {
  if (!sealed) return undefined
  try {
    return cipher.decrypt(decodeURIComponent(sealed), aad(tenantId))
  } catch {
    return undefined
  }
}
