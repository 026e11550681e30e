// What a plain OAuth 2.0 provider's token answer is trusted for (the SPEC idp without
// discovery, CONTRACT §7; the oauth2 presets of social sign-in, §19): a leaf module, so the
// idp's provider (loaded by deps) imports nothing of the sign-in flows.
import type * as Client from 'openid-client'

/**
 * A plain OAuth 2.0 provider has no keys to check an ID token with, so one sent anyway is
 * dropped from the token response rather than trusted.
 */
export function withoutIdToken(
  fetch: Client.CustomFetch,
  tokenEndpoint: string | undefined,
): Client.CustomFetch {
  return async (url, options) => {
    const response = await fetch(url, options)
    if (url !== tokenEndpoint || !response.ok) return response
    const body = (await response.json()) as Record<string, unknown>
    delete body.id_token
    return new Response(JSON.stringify(body), {
      status: response.status,
      headers: { 'content-type': 'application/json' },
    })
  }
}
