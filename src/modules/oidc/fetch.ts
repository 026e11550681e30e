// The OpenID provider's outgoing requests: the back-channel logout tokens (backchannel.ts)
// and the JWK Sets of private_key_jwt applications registered by jwks_uri (CONTRACT §22).
import { egressFetch } from '../../lib/egress.ts'
import { isLoopback } from '../applications/redirect-uris.ts'

type Fetch = (url: string, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>

/** RFC 7517 sets are small; oidc-provider's own limit for a jwks_uri body is 512 KiB. */
const JWKS_MAX_BYTES = 64 * 1024
const JWKS_TIMEOUT_MS = 2500

/**
 * The provider's outgoing requests (its `fetch` option). oidc-provider refuses, when it
 * connects, any address of a special-use range (loopback, private, link-local...), whatever
 * name led there: the connect-time guard behind applications/redirect-uris.ts's check of
 * the names. A GET (oidc-provider fetches a client's jwks_uri, and nothing else, so) goes
 * through the service's own egress guard instead (lib/egress.ts, as webhooks and SSO
 * discovery): the resolved address is checked in the socket's lookup, redirects are not
 * followed, the body is bounded. With OIDC_BACKCHANNEL_ALLOW_LOOPBACK (development and
 * tests only) a URI naming a loopback host is let through, and only such a URI.
 */
export function providerFetch(config: { oidcBackchannelAllowLoopback: boolean }): Fetch {
  return (url, options) => {
    const loopbackAllowed = config.oidcBackchannelAllowLoopback && isLoopback(new URL(url))
    if ((options.method ?? 'GET').toUpperCase() === 'GET') {
      const fetch = egressFetch({
        allowPrivate: loopbackAllowed,
        timeoutMs: JWKS_TIMEOUT_MS,
        maxBytes: JWKS_MAX_BYTES,
      })
      return fetch(url, {
        method: 'GET',
        headers: options.headers as Headers,
        signal: options.signal,
      })
    }
    if (loopbackAllowed) {
      const { dispatcher: _guard, ...rest } = options
      return globalThis.fetch(url, rest)
    }
    return globalThis.fetch(url, options as RequestInit)
  }
}
