// Where a cookie of the hosted pages' flows lives (CONTRACT §16: on https the page cookies
// carry the `__Host-` prefix, so `Path=/`, with the tenant in the cookie's name). Over https
// the name is `__Host-{base}_{slug}[_{connection}]`: Secure, Path=/ and no Domain, which no
// other host (a sibling subdomain included) and no plain-http response can set, and the
// tenant (and the connection, for a flow bound to one) in the name keeps two tenants' flows
// in one browser apart as the path did. Over http (development) the plain name, scoped by
// its path as before.

export interface HostCookie {
  name: string
  path: string
  secure: boolean
}

/** The cookie `base` of the tenant `scope[0]` (and `scope[1..]`), or `httpPath`-scoped on http. */
export function hostCookie(
  publicUrl: string,
  base: string,
  scope: string[],
  httpPath: string,
): HostCookie {
  if (!publicUrl.startsWith('https:')) return { name: base, path: httpPath, secure: false }
  return { name: `__Host-${[base, ...scope].join('_')}`, path: '/', secure: true }
}

/**
 * CONTRACT §21, remembered devices: the device token of a browser that asked to be
 * remembered, in its own HttpOnly cookie (over https `__Host-ta_device_{slug}` at `/`;
 * over http `ta_device` scoped to the tenant's pages). The pages keep it (web/session.ts);
 * every sign-in of those pages sends it back, the federated ones included.
 */
export const deviceCookie = (publicUrl: string, slug: string): HostCookie =>
  hostCookie(publicUrl, 'ta_device', [slug], `/t/${slug}`)

/** The browser's remembered-device token for the tenant `slug`, if it sent one. */
export function deviceTokenOf(
  cookies: Record<string, string>,
  publicUrl: string,
  slug: string,
): string | undefined {
  const value = cookies[deviceCookie(publicUrl, slug).name]
  return value && value.length <= 200 ? value : undefined
}
