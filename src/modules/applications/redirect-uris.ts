// Redirect URI rules of CONTRACT §11 (RFC 9700 §4.1, RFC 8252 §7 for native apps):
//   - absolute, without a fragment (RFC 6749 §3.1.2);
//   - https, or http only on a loopback host (localhost, 127.0.0.1, [::1]);
//   - native apps may also use a private-use scheme in reverse-domain form
//     (`com.example.app:/callback`, RFC 8252 §7.1) and a loopback URI with any port, which
//     the provider matches with the port left out (RFC 8252 §7.3).
// Each wrong URI is a validation issue naming its field and position.
import { isIP } from 'node:net'
import { isInternalAddress } from '../../lib/egress.ts'
import { AppError } from '../../lib/errors.ts'
import type { ApplicationType } from './schemas.ts'

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])
/** RFC 8252 §7.1: a scheme with a period, as a reverse domain name the app's owner holds. */
const PRIVATE_USE_SCHEME = /^[a-z][a-z0-9+\-.]*\.[a-z0-9+\-.]+:$/

export function isLoopback(url: URL): boolean {
  return LOOPBACK.has(url.hostname)
}

/** Why `raw` cannot be a redirect URI of an app of `type`, or undefined when it can. */
export function redirectUriProblem(raw: string, type: ApplicationType): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'must be an absolute URI'
  }
  if (raw.includes('#')) return 'must not have a fragment'
  if (url.username || url.password) return 'must not hold credentials'
  if (url.protocol === 'https:') {
    // RFC 8252 §7.2: a native app's claimed https URI names its own domain, not loopback.
    if (type === 'native' && isLoopback(url)) return 'a native app uses http on loopback'
    return url.hostname ? undefined : 'must name a host'
  }
  if (url.protocol === 'http:') {
    return isLoopback(url) ? undefined : 'http is allowed only for localhost, 127.0.0.1 and [::1]'
  }
  if (type === 'native' && PRIVATE_USE_SCHEME.test(url.protocol)) return undefined
  return type === 'native'
    ? 'must be https, http on a loopback host, or a private-use scheme such as com.example.app:/callback'
    : 'must be https (or http on a loopback host)'
}

/**
 * Why `raw` cannot be a back-channel logout URI. The service itself POSTs logout tokens
 * there (Back-Channel Logout 1.0), so besides the web rules it must be https and must not
 * name a loopback, private or link-local host: a tenant admin (or a leaked API key) could
 * otherwise aim the service's requests at its own network. The address ranges are the
 * egress guard's (lib/egress.ts); names are checked as written here, and oidc-provider
 * checks the resolved address when it connects.
 */
export function backchannelUriProblem(
  raw: string,
  options: BackchannelOptions = {},
): string | undefined {
  const problem = redirectUriProblem(raw, 'web')
  if (problem) return problem
  const url = new URL(raw)
  // Development and tests only (config.ts, OIDC_BACKCHANNEL_ALLOW_LOOPBACK).
  if (options.allowLoopback && isLoopback(url)) return undefined
  if (url.protocol !== 'https:') return 'must be https: the service calls it'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const family = isIP(host)
  const internal =
    host === 'localhost' || host.endsWith('.localhost') || (family !== 0 && isInternalAddress(host))
  return internal ? 'must not name a loopback, private or link-local host' : undefined
}

export interface BackchannelOptions {
  /** OIDC_BACKCHANNEL_ALLOW_LOOPBACK: http(s) on localhost, 127.0.0.1 or [::1] is accepted. */
  allowLoopback?: boolean
}

export interface UriFields {
  redirectUris?: string[]
  postLogoutRedirectUris?: string[]
  backchannelLogoutUri?: string | null
}

/** Throws 400 validation listing every wrong URI of `fields` for an app of `type`. */
export function checkUris(
  type: ApplicationType,
  fields: UriFields,
  options: BackchannelOptions = {},
): void {
  const issues: { path: string; message: string }[] = []
  const list = (name: 'redirectUris' | 'postLogoutRedirectUris') => {
    const uris = fields[name] ?? []
    if (type === 'machine' && uris.length > 0) {
      issues.push({ path: `body.${name}`, message: 'a machine app has no browser redirects' })
      return
    }
    uris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri, type)
      if (problem) issues.push({ path: `body.${name}.${i}`, message: problem })
    })
  }
  list('redirectUris')
  list('postLogoutRedirectUris')
  const backchannel = fields.backchannelLogoutUri
  if (backchannel !== undefined && backchannel !== null) {
    if (type === 'machine') {
      issues.push({ path: 'body.backchannelLogoutUri', message: 'a machine app signs nobody in' })
    } else {
      const problem = backchannelUriProblem(backchannel, options)
      if (problem) issues.push({ path: 'body.backchannelLogoutUri', message: problem })
    }
  }
  if (issues.length > 0) throw new AppError('validation', { details: { issues } })
}
