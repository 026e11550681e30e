// The typed client: one method per operationId of the served OpenAPI document, each
// typed from generated/openapi.ts (openapi-fetch's idea with a runtime of a few lines).
import { AuthServiceError } from './errors.ts'
import {
  type CallOptions,
  type HttpMethod,
  OPERATIONS,
  type OperationArgs,
  type OperationData,
  type OperationId,
} from './operations.ts'

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface ClientOptions {
  /** The service's base URL, e.g. `https://auth.example.com` (no `/v1`). */
  baseUrl: string
  /** The tenant's slug: `{tenantSlug}` of every tenant route. */
  tenant: string
  /** A fetch to use instead of the global one (tests, proxies, the session client). */
  fetch?: FetchLike
  /** A bearer token sent with every call: an access token, an API key, or a function giving one. */
  token?: string | (() => string | undefined | Promise<string | undefined>)
  /** Headers sent with every call. */
  headers?: Record<string, string>
}

/** One method per operationId; each resolves to the success body or throws AuthServiceError. */
export type Client = {
  [K in OperationId]: (...args: OperationArgs<K>) => Promise<OperationData<K>>
}

interface LooseInput extends CallOptions {
  path?: Record<string, string | number>
  query?: Record<string, unknown>
  body?: unknown
}

/** A client for one tenant of the service. */
export function createClient(options: ClientOptions): Client {
  const client: Record<string, (input?: LooseInput) => Promise<unknown>> = {}
  for (const [id, [method, template]] of Object.entries(OPERATIONS)) {
    client[id] = (input) => call(options, method, template, input)
  }
  return client as unknown as Client
}

/** The URL of an operation's path template with its parameters filled in. */
export function operationUrl(
  options: Pick<ClientOptions, 'baseUrl' | 'tenant'>,
  template: string,
  input: Pick<LooseInput, 'path' | 'query'> = {},
): string {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = name === 'tenantSlug' ? options.tenant : input.path?.[name]
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`)
    return encodeURIComponent(String(value))
  })
  const url = new URL(path, options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`)
  for (const [key, value] of Object.entries(input.query ?? {})) {
    if (value === undefined || value === null) continue
    for (const item of Array.isArray(value) ? value : [value])
      url.searchParams.append(key, String(item))
  }
  return url.toString()
}

async function call(
  options: ClientOptions,
  method: HttpMethod,
  template: string,
  input: LooseInput = {},
): Promise<unknown> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...options.headers,
    ...input.headers,
  }
  const token =
    input.token ?? (typeof options.token === 'function' ? await options.token() : options.token)
  if (token) headers.authorization = `Bearer ${token}`
  let body: string | undefined
  if (input.body !== undefined) {
    body = JSON.stringify(input.body)
    headers['content-type'] = 'application/json'
  }
  const send = options.fetch ?? ((url, init) => globalThis.fetch(url, init))
  const res = await send(operationUrl(options, template, input), {
    method: method.toUpperCase(),
    headers,
    body,
    signal: input.signal,
  })
  return readResponse(res)
}

/**
 * The body of a success response: JSON, or a Blob for anything else (images, the audit
 * export's NDJSON, which is not one JSON document); an error throws.
 */
export async function readResponse(res: Response): Promise<unknown> {
  if (!res.ok) {
    if (res.status === 304) return undefined
    throw await AuthServiceError.fromResponse(res)
  }
  if (res.status === 204) return undefined
  const type = res.headers.get('content-type') ?? ''
  return /^application\/(?:[\w.-]+\+)?json\b/i.test(type) ? res.json() : res.blob()
}
