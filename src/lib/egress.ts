// Outbound HTTP to URLs a tenant admin configures (CONTRACT §13, Egress): the address
// actually connected to must not be loopback, private, link-local or unspecified unless
// WEBHOOK_ALLOW_PRIVATE=true. The check runs in the socket's own DNS lookup (and on an IP
// literal before connecting), so a name that resolves, or re-resolves, to an internal
// address is refused where it matters; redirects are never followed.
import { lookup as dnsLookup } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

// Two lists: Node's BlockList checks an IPv4 address against IPv6 rules too, through its
// mapped form, so ::ffff:0:0/96 in one list with the IPv4 rules made every IPv4 address
// internal.
const INTERNAL_V4 = new BlockList()
const INTERNAL_V6 = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  // Benchmarking (RFC 2544), routed inside some networks.
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  INTERNAL_V4.addSubnet(net, bits, 'ipv4')
}
for (const [net, bits] of [
  // IPv4-compatible addresses (RFC 4291 §2.5.5.1, deprecated: ::7f00:1 is 127.0.0.1), with
  // the unspecified :: and the loopback ::1 among them.
  ['::', 96],
  ['::ffff:0:0', 96],
  // SIIT's IPv4-translated addresses (RFC 2765 §2.1: ::ffff:0:7f00:1 is 127.0.0.1).
  ['::ffff:0:0:0', 96],
  // Discard-only (RFC 6666).
  ['100::', 64],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  // 6to4 embeds an IPv4 address (a private one among them) in the prefix.
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local (RFC 3879 deprecated it; still routed inside some networks).
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  INTERNAL_V6.addSubnet(net, bits, 'ipv6')
}

export function isInternalAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  return family === 4
    ? INTERNAL_V4.check(address, 'ipv4')
    : INTERNAL_V6.check(address, 'ipv6') || INTERNAL_V4.check(address, 'ipv6')
}

/**
 * The egress rule refused the address. The message, which the deliveries list shows as
 * `lastError` (and SSO refusals log), never names the address: a host name's resolved
 * internal IP is not the tenant admin's to learn (issue 36 P6). `address` keeps it for
 * the code that must know.
 */
export class EgressRefused extends Error {
  readonly address: string
  constructor(address: string) {
    super('refused: the address is a loopback, private, link-local or unspecified address')
    this.address = address
  }
}

/** The deadline of a request passed (connect to the last byte): the message says which. */
export class EgressTimeout extends Error {}

/** The answer was larger than the caller reads (`egressFetch`'s maxBytes). */
export class EgressTooLarge extends Error {}

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
 * How much of a response body is read before the answer counts as given: a receiver that
 * streams without end (or a huge body) costs at most this much, never the whole deadline.
 * The body is not kept; only the status and headers matter.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024

/**
 * POSTs `body` to `url` under the egress rule, within `timeoutMs` (connect to the end of
 * the response, or to its first MAX_RESPONSE_BYTES: then the connection is closed and the
 * status stands). Never follows a redirect: a 3xx is answered as it is. `signal` aborts.
 */
export function egressPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { allowPrivate: boolean; timeoutMs: number; signal?: AbortSignal },
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
    let settled = false
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      options.signal?.removeEventListener('abort', onAbort)
      fn()
    }
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
        const answer = { status: response.statusCode ?? 0, headers: response.headers }
        let read = 0
        response.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read < MAX_RESPONSE_BYTES) return
          // Enough: the status stands, the rest is never read.
          settle(() => resolve(answer))
          request.destroy()
        })
        response.on('end', () => settle(() => resolve(answer)))
        response.on('error', (error) => settle(() => reject(error)))
      },
    )
    const deadline = setTimeout(() => {
      request.destroy(new EgressTimeout(`no answer within ${options.timeoutMs / 1000} s`))
    }, options.timeoutMs)
    const onAbort = () => request.destroy(new Error('aborted: the worker is stopping'))
    if (options.signal?.aborted) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
    request.on('timeout', () => request.destroy(new EgressTimeout('timed out')))
    request.on('error', (error) => settle(() => reject(error)))
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
  /**
   * Keep connections open for the next request to the same origin (keptAgent): for the
   * blocking hooks, which a sign-in waits for, so each call does not pay a new connection
   * (and TLS handshake). A reused connection that the receiver had closed is retried once
   * on a new one, within the same deadline; the retry is the same request (a hook's
   * `webhook-id` unchanged, so a receiver that saw both can drop the second).
   */
  keepAlive?: boolean
}): (url: string, init?: EgressRequestInit) => Promise<Response> {
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      // One deadline for the call, a retry included (the caller's timeoutMs holds).
      const until = Date.now() + options.timeoutMs
      const attempt = (reuse: boolean) =>
        send(reuse, (error) => {
          // The receiver closed a kept connection as it was reused: once more on a new one.
          const code = (error as NodeJS.ErrnoException).code
          if (reuse && (code === 'ECONNRESET' || code === 'EPIPE')) attempt(false)
          else reject(error)
        })
      const send = (reuse: boolean, fail: (error: Error) => void) => {
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
        const kept = options.keepAlive && reuse
        const request = client.request(
          target,
          {
            method: init.method ?? 'GET',
            headers,
            lookup: guardedLookup(options.allowPrivate),
            agent: kept ? keptAgent(target.protocol, options.allowPrivate) : false,
            timeout: Math.max(1, until - Date.now()),
          },
          (response) => {
            const chunks: Buffer[] = []
            let size = 0
            response.on('data', (chunk: Buffer) => {
              size += chunk.length
              if (size > options.maxBytes) {
                clearTimeout(deadline)
                reject(new EgressTooLarge(`the answer is larger than ${options.maxBytes} bytes`))
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
        const deadline = setTimeout(
          () => {
            request.destroy(new EgressTimeout(`no answer within ${options.timeoutMs / 1000} s`))
          },
          Math.max(1, until - Date.now()),
        )
        request.on('timeout', () => request.destroy(new EgressTimeout('timed out')))
        request.on('error', (error) => {
          clearTimeout(deadline)
          if (request.reusedSocket) fail(error)
          else reject(error)
        })
        init.signal?.addEventListener('abort', () => request.destroy(new Error('aborted')))
        request.end(body)
      }
      attempt(options.keepAlive === true)
    })
}

/**
 * The kept connections of `egressFetch({ keepAlive })`, one agent per protocol and egress
 * rule. A socket is only ever opened through the guarded lookup (or to an IP literal checked
 * before the request), so a reused one goes to an address that passed the rule; a name
 * that re-resolves elsewhere is checked again at its next new connection. Idle sockets are
 * closed after 30 s.
 */
const keptAgents = new Map<string, http.Agent>()
function keptAgent(protocol: string, allowPrivate: boolean): http.Agent {
  const key = `${protocol}${allowPrivate}`
  let agent = keptAgents.get(key)
  if (!agent) {
    const options = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 30_000 }
    agent = protocol === 'https:' ? new https.Agent(options) : new http.Agent(options)
    keptAgents.set(key, agent)
  }
  return agent
}
