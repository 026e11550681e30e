// Outbound HTTP to URLs a tenant admin configures (CONTRACT §13, Egress): the address
// actually connected to must not be loopback, private, link-local or unspecified unless
// WEBHOOK_ALLOW_PRIVATE=true. The check runs in the socket's own DNS lookup (and on an IP
// literal before connecting), so a name that resolves, or re-resolves, to an internal
// address is refused where it matters; redirects are never followed.
import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

const INTERNAL = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 3],
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv4')
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL.addSubnet(net, bits, 'ipv6')
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

export class EgressRefused extends Error {
  constructor(address: string) {
    super(`refused: ${address} is a loopback, private, link-local or unspecified address`)
  }
}

/** A socket lookup that refuses internal addresses (unless `allowPrivate`). */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0)
      const list = addresses as { address: string; family: number }[]
      const refused = allowPrivate ? undefined : list.find((a) => isInternalAddress(a.address))
      if (refused) return callback(new EgressRefused(refused.address), '', 0)
      if (options.all) return (callback as (e: null, a: typeof list) => void)(null, list)
      callback(null, list[0].address, list[0].family)
    })
  }
}

export interface EgressResponse {
  status: number
  headers: http.IncomingHttpHeaders
}

/**
 * POSTs `body` to `url` under the egress rule, within `timeoutMs` (connect to the end of
 * the response). Never follows a redirect: a 3xx is answered as it is.
 */
export function egressPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs: number },
): Promise<EgressResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const host = target.hostname.replace(/^\[|\]$/g, '')
    // An IP literal is connected to without a lookup: checked here.
    if (isIP(host) !== 0 && !options.allowPrivate && isInternalAddress(host)) {
      reject(new EgressRefused(host))
      return
    }
    const client = target.protocol === 'https:' ? https : http
    const request = client.request(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body).toString() },
        lookup: guardedLookup(options.allowPrivate),
        agent: false,
        timeout: options.timeoutMs,
      },
      (response) => {
        // The body is not kept: drain it within the same deadline.
        response.resume()
        response.on('end', () => {
          clearTimeout(deadline)
          resolve({ status: response.statusCode ?? 0, headers: response.headers })
        })
        response.on('error', (error) => {
          clearTimeout(deadline)
          reject(error)
        })
      },
    )
    const deadline = setTimeout(() => {
      request.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`))
    }, options.timeoutMs)
    request.on('timeout', () => request.destroy(new Error('timed out')))
    request.on('error', (error) => {
      clearTimeout(deadline)
      reject(error)
    })
    request.end(body)
  })
}

/** What `egressFetch` is handed: the part of a Fetch API request it sends. */
export interface EgressRequestInit {
  method?: string
  headers?: Headers | Record<string, string> | [string, string][]
  body?: string | URLSearchParams | Uint8Array | null
  signal?: AbortSignal | null
}

/** Statuses whose Response may carry no body (Fetch API). */
const NULL_BODY = new Set([101, 103, 204, 205, 304])

/**
 * A Fetch API `fetch` under the egress rule, for outbound requests to URLs a tenant admin
 * configured that are read as documents (an SSO connection's OIDC discovery, keys and token
 * endpoint: CONTRACT §12; openid-client's `customFetch`). Within `timeoutMs` (connect to the
 * last byte); a body over `maxBytes` is refused; redirects are never followed (a 3xx is
 * answered as it is).
 */
export function egressFetch(options: {
  allowPrivate: boolean
  timeoutMs: number
  maxBytes: number
}): (url: string, init?: EgressRequestInit) => Promise<Response> {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = new URL(url)
      const host = target.hostname.replace(/^\[|\]$/g, '')
      if (isIP(host) !== 0 && !options.allowPrivate && isInternalAddress(host)) {
        reject(new EgressRefused(host))
        return
      }
      if (target.protocol !== 'https:' && target.protocol !== 'http:') {
        reject(new Error(`refused: ${target.protocol} is not http(s)`))
        return
      }
      const headers: Record<string, string> = {}
      for (const [name, value] of new Headers(init.headers ?? {})) headers[name] = value
      const body =
        init.body === undefined || init.body === null
          ? undefined
          : init.body instanceof Uint8Array
            ? Buffer.from(init.body)
            : Buffer.from(String(init.body))
      if (body) headers['content-length'] = String(body.length)
      const client = target.protocol === 'https:' ? https : http
      const request = client.request(
        target,
        {
          method: init.method ?? 'GET',
          headers,
          lookup: guardedLookup(options.allowPrivate),
          agent: false,
          timeout: options.timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = []
          let size = 0
          response.on('data', (chunk: Buffer) => {
            size += chunk.length
            if (size > options.maxBytes) {
              clearTimeout(deadline)
              reject(new Error(`the answer is larger than ${options.maxBytes} bytes`))
              response.destroy()
              request.destroy()
              return
            }
            chunks.push(chunk)
          })
          response.on('end', () => {
            clearTimeout(deadline)
            if (size > options.maxBytes) return
            const status = response.statusCode ?? 502
            const out = new Headers()
            for (const [name, value] of Object.entries(response.headers)) {
              if (value === undefined) continue
              for (const v of Array.isArray(value) ? value : [value]) out.append(name, v)
            }
            resolve(
              new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), {
                status,
                headers: out,
              }),
            )
          })
          response.on('error', (error) => {
            clearTimeout(deadline)
            reject(error)
          })
        },
      )
      const deadline = setTimeout(() => {
        request.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`))
      }, options.timeoutMs)
      request.on('timeout', () => request.destroy(new Error('timed out')))
      request.on('error', (error) => {
        clearTimeout(deadline)
        reject(error)
      })
      init.signal?.addEventListener('abort', () => request.destroy(new Error('aborted')))
      request.end(body)
    })
}
