// The tenant logo: PUT, DELETE, the public GET (SPEC, Administration; CONTRACT §2, Logo).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import { insertApiKey } from '../../../test/fixtures/apikeys.ts'
import {
  b64,
  declaringSize,
  HTML,
  jpeg,
  png,
  pngWithBadCrc,
  pngWithTrailer,
  SVG,
  WEBP_LOSSLESS,
  WEBP_LOSSY,
  webpExtended,
} from '../../../test/fixtures/logos.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { auditEvents, tenantLogos } from '../../db/schema.ts'
import type { LogoMimeType } from './logo-image.ts'

let server: TestServer
before(async (t) => {
  server = await startTestServer(t)
})

const KiB = 1024

async function setup() {
  const t = await createTenant(server)
  return { t, admin: t.admin.accessToken as string }
}

const putLogo = (t: TenantFixture, body: unknown, token?: string) =>
  server.request('PUT', `/v1/${t.slug}/tenant/logo`, body, { token })
const deleteLogo = (t: TenantFixture, token?: string) =>
  server.request('DELETE', `/v1/${t.slug}/tenant/logo`, undefined, { token })

/** GET logo with the raw bytes (the JSON helper would read the body as text). */
async function getLogo(slug: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/${slug}/logo`, { headers })
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) }
}

async function logoRow(tenantId: string) {
  const rows = await server.deps.db
    .select()
    .from(tenantLogos)
    .where(eq(tenantLogos.tenantId, tenantId))
  return rows[0]
}

test('PUT logo stores a PNG that GET logo serves back with its type, an ETag and nosniff', async () => {
  const { t, admin } = await setup()
  const image = png()
  const res = await putLogo(t, { mimeType: 'image/png', data: b64(image) }, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(Object.keys(res.body).sort(), ['logoUrl', 'mimeType', 'updatedAt'])
  assert.equal(res.body.logoUrl, `http://auth.test/v1/${t.slug}/logo`)
  assert.equal(res.body.mimeType, 'image/png')
  assert.equal(res.body.updatedAt, server.clock.now().toISOString())

  const got = await getLogo(t.slug)
  assert.equal(got.status, 200)
  assert.deepEqual(got.bytes, image)
  assert.equal(got.headers.get('content-type'), 'image/png')
  assert.equal(got.headers.get('x-content-type-options'), 'nosniff')
  assert.match(got.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]+"$/)
  assert.equal(got.headers.get('cache-control'), 'public, max-age=300')
  assert.match(got.headers.get('content-security-policy') ?? '', /sandbox/)

  // The record and /me point at it.
  const record = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token: admin })
  assert.equal(record.body.logoUrl, res.body.logoUrl)
  const me = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: admin })
  assert.equal(me.body.tenant.logoUrl, res.body.logoUrl)

  const events = await server.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'TenantUpdated')))
  assert.equal(events.length, 1)
  assert.deepEqual(events[0].metadata.fields, ['logo'])
})

test('GET logo answers 304 for a matching If-None-Match, and the bytes for another tag', async () => {
  const { t, admin } = await setup()
  assert.equal((await putLogo(t, { mimeType: 'image/png', data: b64(png()) }, admin)).status, 200)
  const first = await getLogo(t.slug)
  const etag = first.headers.get('etag') as string
  const cached = await getLogo(t.slug, { 'if-none-match': etag })
  assert.equal(cached.status, 304)
  assert.equal(cached.bytes.length, 0)
  assert.equal(cached.headers.get('content-type'), null, 'a 304 carries no body, not even null')
  assert.equal(cached.headers.get('etag'), etag)
  assert.equal((await getLogo(t.slug, { 'if-none-match': `"x", W/${etag}` })).status, 304)
  assert.equal((await getLogo(t.slug, { 'if-none-match': '*' })).status, 304)
  const stale = await getLogo(t.slug, { 'if-none-match': '"something-else"' })
  assert.equal(stale.status, 200)
  assert.deepEqual(stale.bytes, first.bytes)

  // A new logo has a new tag: the old one no longer matches.
  const jpg = jpeg()
  assert.equal((await putLogo(t, { mimeType: 'image/jpeg', data: b64(jpg) }, admin)).status, 200)
  const replaced = await getLogo(t.slug, { 'if-none-match': etag })
  assert.equal(replaced.status, 200)
  assert.deepEqual(replaced.bytes, jpg)
  assert.equal(replaced.headers.get('content-type'), 'image/jpeg')
  assert.notEqual(replaced.headers.get('etag'), etag)
})

test('PUT logo accepts JPEG, lossy and lossless WebP, and a data: URL of the same type', async () => {
  const { t, admin } = await setup()
  const cases: [string, Buffer, string][] = [
    ['image/jpeg', jpeg(), b64(jpeg())],
    ['image/webp', WEBP_LOSSY, b64(WEBP_LOSSY)],
    ['image/webp', WEBP_LOSSLESS, b64(WEBP_LOSSLESS)],
    ['image/png', png(), `data:image/png;base64,${b64(png())}`],
    ['image/jpeg', jpeg(), `data:image/jpeg;base64,${b64(jpeg())}`],
  ]
  for (const [mimeType, bytes, data] of cases) {
    const res = await putLogo(t, { mimeType, data }, admin)
    assert.equal(res.status, 200, `${mimeType}: ${JSON.stringify(res.body)}`)
    const got = await getLogo(t.slug)
    assert.equal(got.headers.get('content-type'), mimeType)
    assert.deepEqual(got.bytes, bytes)
  }
})

test('PUT logo accepts exactly 512 KiB and refuses one byte more with invalid_logo', async () => {
  const { t, admin } = await setup()
  const largest = png({ padTo: 512 * KiB })
  assert.equal(largest.length, 512 * KiB)
  const ok = await putLogo(t, { mimeType: 'image/png', data: b64(largest) }, admin)
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  const withPrefix = await putLogo(
    t,
    { mimeType: 'image/png', data: `data:image/png;base64,${b64(largest)}` },
    admin,
  )
  assert.equal(withPrefix.status, 200, JSON.stringify(withPrefix.body))
  assert.deepEqual((await getLogo(t.slug)).bytes, largest)

  const tooBig = png({ padTo: 512 * KiB + 1 })
  await unchanged(server, t.tenantId, async () => {
    const res = await putLogo(t, { mimeType: 'image/png', data: b64(tooBig) }, admin)
    expectError(res, 400, 'invalid_logo')
    assert.match(res.body.message, /512 KiB/)
  })
})

test('an oversized logo body is refused from its length, before it is parsed or decoded', async () => {
  const { t, admin } = await setup()
  await unchanged(server, t.tenantId, async () => {
    // Not even JSON: had it been read, the answer would be malformed_json.
    const res = await server.request('PUT', `/v1/${t.slug}/tenant/logo`, undefined, {
      token: admin,
      raw: 'x'.repeat(2 * 1024 * KiB),
    })
    expectError(res, 400, 'invalid_logo')
    const big = await putLogo(
      t,
      { mimeType: 'image/png', data: b64(png({ padTo: 600 * KiB })) },
      admin,
    )
    expectError(big, 400, 'invalid_logo')
  })
})

test('logo input that lies is refused with 400 invalid_logo and changes nothing', async () => {
  const { t, admin } = await setup()
  // A logo already stored must survive every refused upload.
  assert.equal((await putLogo(t, { mimeType: 'image/png', data: b64(png()) }, admin)).status, 200)
  const pngHeaderThenHtml = Buffer.concat([png().subarray(0, 8), HTML])
  const jpegSoiThenHtml = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), HTML])
  const truncatedPng = png().subarray(0, png().length - 12)
  const jpegWithTrailer = Buffer.concat([jpeg(), HTML])
  const webpWrongSize = Buffer.from(WEBP_LOSSY)
  webpWrongSize.writeUInt32LE(1000, 4)
  const webpWithTrailer = Buffer.concat([WEBP_LOSSY, HTML])
  const riffWave = Buffer.from(WEBP_LOSSY)
  riffWave.write('WAVE', 8, 'latin1')
  const cases: [string, string, string][] = [
    ['SVG labelled as PNG', 'image/png', b64(SVG)],
    ['SVG labelled as WebP', 'image/webp', b64(SVG)],
    ['HTML labelled as PNG', 'image/png', b64(HTML)],
    ['HTML labelled as JPEG', 'image/jpeg', b64(HTML)],
    ['a PNG header followed by HTML', 'image/png', b64(pngHeaderThenHtml)],
    ['a PNG followed by HTML', 'image/png', b64(pngWithTrailer('<script>alert(1)</script>'))],
    ['a PNG with a bad CRC', 'image/png', b64(pngWithBadCrc())],
    ['a PNG without IEND', 'image/png', b64(truncatedPng)],
    ['a JPEG labelled as PNG', 'image/png', b64(jpeg())],
    ['a PNG labelled as JPEG', 'image/jpeg', b64(png())],
    ['a WebP labelled as PNG', 'image/png', b64(WEBP_LOSSY)],
    ['a JPEG start followed by HTML', 'image/jpeg', b64(jpegSoiThenHtml)],
    ['a JPEG followed by HTML', 'image/jpeg', b64(jpegWithTrailer)],
    ['a WebP whose RIFF size lies', 'image/webp', b64(webpWrongSize)],
    ['a WebP followed by HTML', 'image/webp', b64(webpWithTrailer)],
    ['a RIFF WAVE labelled as WebP', 'image/webp', b64(riffWave)],
    ['bad base64', 'image/png', '%%%not-base64%%%'],
    ['base64url', 'image/jpeg', b64(jpeg()).replace(/\+/g, '-').replace(/\//g, '_')],
    ['base64 with a wrong length', 'image/png', b64(png()).slice(0, -1)],
    ['base64 with whitespace', 'image/png', b64(png()).replace(/(.{20})/, '$1 ')],
    ['a data: URL of another type', 'image/png', `data:image/jpeg;base64,${b64(png())}`],
    ['an SVG data: URL', 'image/png', `data:image/svg+xml;base64,${b64(SVG)}`],
    ['a data: URL without data', 'image/png', 'data:image/png;base64,'],
    // Percent-encoded, as such a URL is written: raw, its NUL bytes would be refused
    // earlier, with 400 validation (CONTRACT §8, checked below).
    [
      'a non-base64 data: URL',
      'image/png',
      `data:image/png,${encodeURIComponent(png().toString('latin1'))}`,
    ],
  ]
  assert.match(b64(jpeg()), /\//, 'the base64url case differs from base64')
  await unchanged(server, t.tenantId, async () => {
    for (const [what, mimeType, data] of cases) {
      const res = await putLogo(t, { mimeType, data }, admin)
      assert.equal(res.status, 400, what)
      expectError(res, 400, 'invalid_logo')
    }
    const rawBytes = `data:image/png,${png().toString('latin1')}`
    expectError(
      await putLogo(t, { mimeType: 'image/png', data: rawBytes }, admin),
      400,
      'validation',
    )
  })
})

test('a logo over 4096 pixels on a side is refused from its header, in every format', async () => {
  const { t, admin } = await setup()
  const formats: [string, LogoMimeType, Buffer][] = [
    ['PNG', 'image/png', png()],
    ['JPEG', 'image/jpeg', jpeg()],
    ['lossy WebP', 'image/webp', WEBP_LOSSY],
    ['lossless WebP', 'image/webp', WEBP_LOSSLESS],
    ['extended WebP', 'image/webp', webpExtended()],
  ]
  for (const [what, mimeType, image] of formats) {
    // The edge is accepted: 4096 on both sides.
    const edge = await putLogo(t, { mimeType, data: b64(declaringSize(image, 4096, 4096)) }, admin)
    assert.equal(edge.status, 200, `${what} of 4096×4096`)
  }
  await unchanged(server, t.tenantId, async () => {
    for (const [what, mimeType, image] of formats) {
      for (const [width, height] of [
        [4097, 1],
        [1, 4097],
        [16383, 16383],
      ]) {
        const data = b64(declaringSize(image, width, height))
        const res = await putLogo(t, { mimeType, data }, admin)
        expectError(res, 400, 'invalid_logo')
        assert.match(res.body.message, /4096 pixels/, `${what} of ${width}×${height}`)
      }
    }
    // The 20000×20000 PNG of the report: small bytes, a huge declared canvas.
    const huge = await putLogo(
      t,
      { mimeType: 'image/png', data: b64(declaringSize(png(), 20_000, 20_000)) },
      admin,
    )
    expectError(huge, 400, 'invalid_logo')
  })
})

test('PUT logo refuses bad fields with 400 validation and changes nothing', async () => {
  const { t, admin } = await setup()
  const data = b64(png())
  const cases: [unknown, string | undefined][] = [
    [{ mimeType: 'image/svg+xml', data: b64(SVG) }, 'body.mimeType'],
    [{ mimeType: 'text/html', data: b64(HTML) }, 'body.mimeType'],
    [{ mimeType: 'image/gif', data }, 'body.mimeType'],
    [{ mimeType: 'IMAGE/PNG', data }, 'body.mimeType'],
    [{ data }, 'body.mimeType'],
    [{ mimeType: 'image/png' }, 'body.data'],
    [{ mimeType: 'image/png', data: '' }, 'body.data'],
    [{ mimeType: 'image/png', data: 42 }, 'body.data'],
    [{ mimeType: 'image/png', data: [data] }, 'body.data'],
    [{ mimeType: ['image/png'], data }, 'body.mimeType'],
    [[], undefined],
  ]
  await unchanged(server, t.tenantId, async () => {
    for (const [body, path] of cases) expectValidation(await putLogo(t, body, admin), path)
    const malformed = await server.request('PUT', `/v1/${t.slug}/tenant/logo`, undefined, {
      token: admin,
      raw: '{"mimeType":"image/png","data":',
    })
    expectError(malformed, 400, 'malformed_json')
  })
})

test('DELETE logo removes it: GET logo is 404 and logoUrl is ""; deleting again is a no-op', async () => {
  const { t, admin } = await setup()
  assert.equal((await putLogo(t, { mimeType: 'image/png', data: b64(png()) }, admin)).status, 200)
  const meBefore = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: admin })
  assert.equal(meBefore.body.tenant.logoUrl, `http://auth.test/v1/${t.slug}/logo`)
  const res = await deleteLogo(t, admin)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { ok: true })
  assert.equal(await logoRow(t.tenantId), undefined)
  expectError(await server.request('GET', `/v1/${t.slug}/logo`), 404, 'not_found')
  const record = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token: admin })
  assert.equal(record.body.logoUrl, '')
  // /me reads logo presence from the tenant cache, which the change cleared.
  const meAfter = await server.request('GET', `/v1/${t.slug}/me`, undefined, { token: admin })
  assert.equal(meAfter.body.tenant.logoUrl, '')
  const events = await server.deps.db
    .select()
    .from(auditEvents)
    .where(and(eq(auditEvents.tenantId, t.tenantId), eq(auditEvents.action, 'TenantUpdated')))
  assert.equal(events.length, 2)

  await unchanged(server, t.tenantId, async () => {
    const again = await deleteLogo(t, admin)
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, { ok: true })
  })
})

test('GET logo: 404 not_found without a logo, 404 tenant_not_found for an unknown slug', async () => {
  const { t } = await setup()
  expectError(await server.request('GET', `/v1/${t.slug}/logo`), 404, 'not_found')
  expectError(await server.request('GET', '/v1/no-such-tenant-logo/logo'), 404, 'tenant_not_found')
})

test('logo admin routes: a Member gets 403 admin_required, no token 401; nothing changes', async () => {
  const { t, admin } = await setup()
  assert.equal((await putLogo(t, { mimeType: 'image/png', data: b64(png()) }, admin)).status, 200)
  const member = await signup(server, t.slug)
  const body = { mimeType: 'image/jpeg', data: b64(jpeg()) }
  await unchanged(server, t.tenantId, async () => {
    expectError(await putLogo(t, body, member.accessToken), 403, 'admin_required')
    expectError(await deleteLogo(t, member.accessToken), 403, 'admin_required')
    expectError(await putLogo(t, body), 401, 'token_missing')
    expectError(await deleteLogo(t), 401, 'token_missing')
  })
})

test('an API key of the tenant can set and remove the logo', async () => {
  const { t } = await setup()
  const key = await insertApiKey(server, t.tenantId)
  const res = await putLogo(t, { mimeType: 'image/webp', data: b64(WEBP_LOSSY) }, key)
  assert.equal(res.status, 200)
  assert.equal((await getLogo(t.slug)).status, 200)
  assert.equal((await deleteLogo(t, key)).status, 200)
  assert.equal((await getLogo(t.slug)).status, 404)
})

test("tenant isolation: one tenant's admin or key cannot set or remove another tenant's logo", async () => {
  const a = await setup()
  const b = await setup()
  const bKey = await insertApiKey(server, b.t.tenantId)
  assert.equal(
    (await putLogo(a.t, { mimeType: 'image/png', data: b64(png()) }, a.admin)).status,
    200,
  )
  const body = { mimeType: 'image/jpeg', data: b64(jpeg()) }
  await unchanged(server, a.t.tenantId, async () => {
    expectError(await putLogo(a.t, body, b.admin), 401, 'token_invalid')
    expectError(await putLogo(a.t, body, bKey), 401, 'invalid_api_key')
    expectError(await deleteLogo(a.t, b.admin), 401, 'token_invalid')
    expectError(await deleteLogo(a.t, bKey), 401, 'invalid_api_key')
  })
  // B's own upload lands on B only.
  assert.equal((await putLogo(b.t, body, b.admin)).status, 200)
  assert.equal((await getLogo(a.t.slug)).headers.get('content-type'), 'image/png')
  assert.equal((await getLogo(b.t.slug)).headers.get('content-type'), 'image/jpeg')
})
