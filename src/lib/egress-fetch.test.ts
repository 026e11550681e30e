// egressFetch (CONTRACT §13's egress rule, for the SSO connections' OIDC requests of §12):
// an internal address is refused at connect time, by name or as a literal, unless allowed;
// an answer over the size limit is refused; a redirect is answered, not followed; a server
// that does not answer in time is given up.
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { EgressRefused, egressFetch, isInternalAddress } from './egress.ts'

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

test('internal addresses: every range the egress rule refuses, and public ones it lets through', () => {
  const internal = [
    ...['0.0.0.0', '10.1.2.3', '100.64.0.1', '127.0.0.1', '169.254.169.254', '172.16.0.1'],
    ...['192.168.1.1', '198.18.0.1', '198.19.255.255', '224.0.0.1', '255.255.255.255'],
    ...['::', '::1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '64:ff9b:1::a00:1'],
    ...['2002:a00:1::1', 'fc00::1', 'fd12::1', 'fe80::1', 'ff02::1', 'not an address'],
    // IPv4-compatible, SIIT-translated, discard-only and site-local (issue 36).
    ...['::7f00:1', '::a00:1', '::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe', '100::1', 'fec0::1'],
    'feff:ffff::1',
  ]
  for (const address of internal) assert.equal(isInternalAddress(address), true, address)
  const external = [
    '1.1.1.1',
    '8.8.8.8',
    '198.20.0.1',
    '203.0.113.1',
    '2001:db8::1',
    '2606:4700::1',
  ]
  for (const address of external) assert.equal(isInternalAddress(address), false, address)
})

test('internal addresses (property): every IPv6 spelling of an internal IPv4 address is internal, and so is all of fec0::/10', () => {
  const octet = fc.integer({ min: 0, max: 255 })
  const internalV4 = fc.oneof(
    fc.tuple(fc.constant(127), octet, octet, octet),
    fc.tuple(fc.constant(10), octet, octet, octet),
    fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
    fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
    fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
  )
  const hex = (a: number, b: number) => ((a << 8) | b).toString(16)
  fc.assert(
    fc.property(internalV4, ([a, b, c, d]) => {
      const low = `${hex(a, b)}:${hex(c, d)}`
      for (const spelling of [
        `${a}.${b}.${c}.${d}`,
        `::ffff:${a}.${b}.${c}.${d}`,
        `::ffff:${low}`,
        `::${low}`,
        `::${a}.${b}.${c}.${d}`,
        `::ffff:0:${low}`,
        `64:ff9b::${low}`,
        `2002:${low}::1`,
      ]) {
        assert.equal(isInternalAddress(spelling), true, spelling)
      }
    }),
  )
  const word = fc.integer({ min: 0, max: 0xffff })
  fc.assert(
    fc.property(
      fc.integer({ min: 0xfec0, max: 0xfeff }),
      fc.array(word, { minLength: 7, maxLength: 7 }),
      (first, rest) => {
        const address = [first, ...rest].map((w) => w.toString(16)).join(':')
        assert.equal(isInternalAddress(address), true, address)
      },
    ),
  )
})

test('keepAlive: calls to one origin share one connection; a connection the server closed meanwhile is retried on a new one, never failed; the rule still refuses internal addresses', async () => {
  const sockets = new Set<unknown>()
  let served = 0
  const kept = createServer((req, res) => {
    sockets.add(req.socket)
    req.resume()
    req.on('end', () => {
      served++
      res.setHeader('content-type', 'application/json')
      res.end('{"decision":"allow"}')
    })
  })
  await new Promise<void>((resolve) => kept.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(kept.address() as AddressInfo).port}/hook`
  const post = egressFetch({ allowPrivate: true, timeoutMs: 2000, maxBytes: 1024, keepAlive: true })
  try {
    for (let i = 0; i < 5; i++) {
      const res = await post(url, { method: 'POST', body: '{}' })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), { decision: 'allow' })
    }
    assert.equal(served, 5)
    assert.equal(sockets.size, 1, 'one connection for five calls')
    // The server ends every idle connection; the next calls still get their answers.
    for (let i = 0; i < 5; i++) {
      kept.closeIdleConnections()
      const res = await post(url, { method: 'POST', body: '{}' })
      assert.equal(res.status, 200)
    }
    assert.equal(served, 10)
    const guarded = egressFetch({
      allowPrivate: false,
      timeoutMs: 2000,
      maxBytes: 1024,
      keepAlive: true,
    })
    await assert.rejects(guarded(url, { method: 'POST', body: '{}' }), EgressRefused)
    await assert.rejects(
      guarded(url.replace('127.0.0.1', 'localhost'), { method: 'POST', body: '{}' }),
      EgressRefused,
    )
    assert.equal(served, 10, 'nothing reached the internal address')
  } finally {
    kept.closeAllConnections()
    kept.close()
  }
})
