// The OpenID provider's outgoing requests: the back-channel logout tokens (backchannel.ts).
import { isLoopback } from '../applications/redirect-uris.ts'

type Fetch = (url: string, options: RequestInit & { dispatcher?: unknown }) => Promise<Response>

/**
 * The provider's outgoing requests (its `fetch` option). oidc-provider refuses, when it
 * connects, any address of a special-use range (loopback, private, link-local...), whatever
 * name led there: the connect-time guard behind applications/redirect-uris.ts's check of
 * the names. With OIDC_BACKCHANNEL_ALLOW_LOOPBACK (development and tests only) a URI
 * naming a loopback host is let through, and only such a URI.
 */
export function providerFetch(config: { oidcBackchannelAllowLoopback: boolean }): Fetch {
  return (url, options) => {
    if (config.oidcBackchannelAllowLoopback && isLoopback(new URL(url))) {
      const { dispatcher: _guard, ...rest } = options
      return globalThis.fetch(url, rest)
    }
    return globalThis.fetch(url, options as RequestInit)
  }
}
