// egressFetch (CONTRACT §13's egress rule, for the SSO connections' OIDC requests of §12):
// an internal address is refused at connect time, by name or as a literal, unless allowed;
// an answer over the size limit is refused; a redirect is answered, not followed; a server
// that does not answer in time is given up.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { EgressRefused, egressFetch } from './egress.ts'

let server: Server
let port = 0
before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/big') return res.end('x'.repeat(4096))
    if (req.url === '/moved') {
      res.writeHead(302, { location: '/elsewhere' })
      return res.end()
    }
    if (req.url === '/slow') return
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ method: req.method, body, auth: req.headers.authorization ?? null }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
after(() => {
  server.closeAllConnections()
  server.close()
})

const allowed = egressFetch({ allowPrivate: true, timeoutMs: 500, maxBytes: 1024 })

test('egressFetch refuses loopback by IP literal and by name unless private addresses are allowed', async () => {
  const strict = egressFetch({ allowPrivate: false, timeoutMs: 2000, maxBytes: 1024 })
  await assert.rejects(strict(`http://127.0.0.1:${port}/`), EgressRefused)
  await assert.rejects(strict(`http://localhost:${port}/`), EgressRefused)
  await assert.rejects(strict(`http://[::1]:${port}/`), EgressRefused)
  const ok = await allowed(`http://localhost:${port}/x`, {
    method: 'POST',
    headers: new Headers({ authorization: 'Basic abc' }),
    body: new URLSearchParams({ a: '1' }),
  })
  assert.equal(ok.status, 200)
  assert.deepEqual(await ok.json(), { method: 'POST', body: 'a=1', auth: 'Basic abc' })
})

test('egressFetch refuses an answer over its size limit, gives up on a slow server, and does not follow redirects', async () => {
  await assert.rejects(allowed(`http://127.0.0.1:${port}/big`), /larger than 1024 bytes/)
  await assert.rejects(allowed(`http://127.0.0.1:${port}/slow`), /timed out|no answer/)
  const moved = await allowed(`http://127.0.0.1:${port}/moved`)
  assert.equal(moved.status, 302)
  assert.equal(moved.headers.get('location'), '/elsewhere')
})
