// A bare HTTP/1.1 client on a TCP socket, for the fuzz suite: fetch (and node:http)
// percent-encode the URL, normalise `..`, and refuse header bytes such as NUL, so they
// cannot send the requests a hostile client can. This one writes the bytes it is given.
import { connect } from 'node:net'

export interface WireRequest {
  method: string
  /** The request target exactly as sent (`/v1/x/me?limit=1`), one byte per Latin-1 unit. */
  target: string
  /** Header lines, values as Latin-1 byte strings; Host and Content-Length are added. */
  headers: [string, string][]
  body?: Buffer
}

export interface WireResponse {
  status: number
  headers: Map<string, string>
  body: Buffer
}

/** Sends one request on a fresh connection and reads one response (or fails after `ms`). */
export function send(port: number, request: WireRequest, ms = 15_000): Promise<WireResponse> {
  const lines = [`${request.method} ${request.target} HTTP/1.1`, `host: 127.0.0.1:${port}`]
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`)
  if (request.body) lines.push(`content-length: ${request.body.length}`)
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    let done = false
    const finish = (error?: Error) => {
      if (done) return
      const response = parse(Buffer.concat(chunks), request.method, error !== undefined)
      if (!response && !error) return // not complete yet
      done = true
      clearTimeout(timer)
      socket.destroy()
      if (response) resolve(response)
      else reject(error)
    }
    const timer = setTimeout(() => finish(new Error(`no complete response within ${ms} ms`)), ms)
    socket.on('data', (chunk) => {
      chunks.push(chunk)
      finish()
    })
    // The server may answer and close before it read the whole body (a 404 in onRequest):
    // a reset after a complete answer is still that answer.
    socket.on('error', (error) => finish(error))
    socket.on('end', () => finish(new Error('connection closed before a complete response')))
    socket.write(request.body ? Buffer.concat([head, request.body]) : head)
  })
}

/**
 * The response in `data`, or undefined while it is incomplete. Once the connection `ended`,
 * a body without a length or chunks is complete.
 */
function parse(data: Buffer, method: string, ended: boolean): WireResponse | undefined {
  const end = data.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine, ...headerLines] = data.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
  const headers = new Map<string, string>()
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  const rest = data.subarray(end + 4)
  if (method === 'HEAD' || status === 204 || status === 304) {
    return { status, headers, body: Buffer.alloc(0) }
  }
  const length = headers.get('content-length')
  if (length !== undefined) {
    if (rest.length < Number(length)) return undefined
    return { status, headers, body: rest.subarray(0, Number(length)) }
  }
  if (headers.get('transfer-encoding')?.includes('chunked')) {
    const body = dechunk(rest)
    return body ? { status, headers, body } : undefined
  }
  // Neither length nor chunks: the body runs to the end of the connection.
  return ended ? { status, headers, body: rest } : undefined
}

function dechunk(data: Buffer): Buffer | undefined {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    if (lineEnd < 0) return undefined
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (Number.isNaN(size)) return undefined
    if (size === 0) return Buffer.concat(parts)
    if (data.length < lineEnd + 2 + size + 2) return undefined
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}
