// The OpenID application a hosted-pages sign-in serves (CONTRACT §11, Sign-in: UserLogin
// carries `metadata.clientId`). The pages call the API in the process (web/api.ts) and name
// the application in a header; a caller from outside could send the same header, so it is
// believed only next to this process's key, made at start and never sent out of the
// process. Without the key the header is ignored, never an error.
import { randomBytes, timingSafeEqual } from 'node:crypto'

export const SERVED_CLIENT_HEADER = 'x-served-client'
const PAGES_KEY_HEADER = 'x-hosted-pages-key'
const pagesKey = randomBytes(32).toString('base64url')

/** The headers of an in-process call of the pages that serves `clientId`. */
export function servedClientHeaders(clientId: string): Record<string, string> {
  return { [SERVED_CLIENT_HEADER]: clientId, [PAGES_KEY_HEADER]: pagesKey }
}

type Headers = Record<string, string | string[] | undefined>

/** The application named by the pages' own call, or undefined for any other caller. */
export function servedClientOf(headers: Headers): string | undefined {
  const key = headers[PAGES_KEY_HEADER]
  const clientId = headers[SERVED_CLIENT_HEADER]
  if (typeof key !== 'string' || typeof clientId !== 'string') return undefined
  const given = Buffer.from(key)
  const ours = Buffer.from(pagesKey)
  if (given.length !== ours.length || !timingSafeEqual(given, ours)) return undefined
  return clientId.length > 0 && clientId.length <= 255 ? clientId : undefined
}

/**
 * The application a hosted-pages sign-in serves, for UserLogin's metadata: an OpenID
 * application's client id (CONTRACT §11), or a SAML application's id (`saml:{id}`, named by
 * web/pages/saml-sso.ts; CONTRACT §22: `samlApp`).
 */
export function servedApplication(served: string | undefined): {
  clientId?: string
  samlApp?: string
} {
  if (!served) return {}
  return served.startsWith('saml:')
    ? { samlApp: served.slice('saml:'.length) }
    : { clientId: served }
}
