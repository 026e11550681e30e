// HTTP limits of CONTRACT §8, answered by Node's parser before Fastify sees a request: a
// request whose headers and body have not arrived in time is 408, headers over 16 KiB are
// 431, malformed HTTP is 400, each with the envelope. Without the rule a trickled body
// held its connection for minutes and these answers left in Fastify's own shape.
import assert from 'node:assert/strict'
import { connect, type Socket } from 'node:net'
import { before, describe, test } from 'node:test'
import { buildApp, HTTP_TIMEOUTS } from '../src/app.ts'
import {
  createTenant,
  rawRequest,
  startTestServer,
  type TestServer,
  testConfig,
} from './helpers.ts'
import { databaseFromTemplate } from './pglite-template.ts'

// A request timeout of a second, checked every 100 ms, so a 408 comes within the test.
let server: TestServer
let slug: string
before(async (t) => {
  server = await startTestServer(t, {}, { timeouts: { requestMs: 1000, checkMs: 100 } })
  slug = (await createTenant(server)).slug
})

interface Answer {
  text: string
  /** Milliseconds from the first byte sent to the connection's close. */
  closedAfterMs: number
}

/** Writes `parts` with `gapMs` between them, and reads until the server closes. */
function trickle(parts: string[], gapMs: number): Promise<Answer> {
  const { port } = new URL(server.url)
  const started = Date.now()
  return new Promise((resolve, reject) => {
    let text = ''
    const timers: NodeJS.Timeout[] = []
    const socket: Socket = connect(Number(port), '127.0.0.1', () => {
      parts.forEach((part, i) => {
        timers.push(
          setTimeout(() => {
            if (!socket.destroyed) socket.write(part)
          }, i * gapMs),
        )
      })
    })
    socket.on('data', (d) => {
      text += d.toString('utf8')
    })
    socket.on('close', () => {
      for (const timer of timers) clearTimeout(timer)
      resolve({ text, closedAfterMs: Date.now() - started })
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error)
    })
  })
}

function envelopeOf(text: string) {
  return JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))
}

describe('timeouts', () => {
  test('a body trickled past the request timeout is answered 408 and the connection closed', async () => {
    const head =
      `POST /v1/${slug}/auth/login HTTP/1.1\r\nHost: x\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n'
    // One byte every 200 ms: the body would take 20 s to arrive.
    const answer = await trickle([head, ...Array.from({ length: 40 }, () => ' ')], 200)
    assert.match(answer.text, /^HTTP\/1\.1 408 /, answer.text)
    const body = envelopeOf(answer.text)
    assert.deepEqual(body, {
      code: 'REQUEST_TIMEOUT',
      message: body.message,
      details: { reason: 'request_timeout' },
    })
    assert.ok(answer.closedAfterMs < 3000, `closed after ${answer.closedAfterMs} ms`)
  })

  test('headers that never end (slowloris) are answered 408 too', async () => {
    const answer = await trickle(
      [
        `GET /v1/${slug}/auth/config HTTP/1.1\r\n`,
        ...Array.from({ length: 40 }, (_, i) => `X-${i}: a\r\n`),
      ],
      200,
    )
    assert.match(answer.text, /^HTTP\/1\.1 408 /, answer.text)
    assert.equal(envelopeOf(answer.text).details.reason, 'request_timeout')
  })

  test('a request that arrives in time is answered as usual on the same settings', async () => {
    const res = await server.request('GET', `/v1/${slug}/auth/config`)
    assert.equal(res.status, 200)
  })

  test('the service defaults: 30 s for a request, checked every 5 s, 72 s keep-alive', async () => {
    assert.deepEqual(HTTP_TIMEOUTS, { requestMs: 30_000, checkMs: 5_000, keepAliveMs: 72_000 })
    const database = await databaseFromTemplate()
    const { app } = await buildApp(testConfig({ databaseUrl: 'memory://', redisUrl: undefined }), {
      database,
      logger: false,
      purgeTimer: false,
      webhookWorker: false,
    })
    try {
      assert.equal(app.server.requestTimeout, 30_000)
      assert.equal(app.server.keepAliveTimeout, 72_000)
    } finally {
      await app.close()
      await database?.close()
    }
  })
})

describe("Node's own answers use the envelope", () => {
  test('headers over 16 KiB: 431 HEADERS_TOO_LARGE', async () => {
    const answer = await rawRequest(
      server.url,
      `GET /v1/${slug}/auth/config HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 431 /, answer)
    const body = envelopeOf(answer)
    assert.equal(body.code, 'HEADERS_TOO_LARGE')
    assert.equal(body.details.reason, 'headers_too_large')
  })

  test('headers just under the limit are served', async () => {
    const res = await server.request('GET', `/v1/${slug}/auth/config`, undefined, {
      headers: { 'x-big': 'a'.repeat(15 * 1024) },
    })
    assert.equal(res.status, 200)
  })

  test('malformed HTTP: 400 with the envelope', async () => {
    for (const request of [
      'GET / HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n',
      'NOT-A-METHOD\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nabc',
    ]) {
      const answer = await rawRequest(server.url, request)
      assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(request))
      const body = envelopeOf(answer)
      assert.equal(body.code, 'BAD_REQUEST')
      assert.equal(body.details.reason, 'validation')
    }
  })
})
