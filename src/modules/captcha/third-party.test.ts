// CAPTCHA by Turnstile, hCaptcha and reCAPTCHA (CONTRACT §21) over real HTTP: the token is
// checked at a siteverify stand-in of this file's (a real HTTP server, reached through the
// egress guard at the URL CAPTCHA_VERIFY_URL_* gives) with the tenant's secret, the
// token and the caller's address; a refusal, a non-2xx, an unreadable answer and one that
// never comes are captcha_invalid and change nothing. The setting: the secret is
// write-only (never in the record or the audit log), kept across a PATCH of the same
// provider, and bad input (unknown provider or action, a third-party provider without its
// site key or secret, a key for altcha) is 400 validation with nothing changed.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { auditRows, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'

const SECRET = 'site-secret-0xDEADBEEF'
const GOOD = 'good-token'

interface Seen {
  path: string
  form: URLSearchParams
}

/**
 * A siteverify endpoint per behaviour, as the providers answer: `/ok` knows GOOD under
 * SECRET (and, asked with a sitekey, only `site-1`); `/500` answers 500 with a body
 * claiming success; `/garbage` answers 200 with HTML; `/hang` never answers.
 */
let seen: Seen[] = []
let standIn: { url: string; close: () => Promise<void> }
async function startStandIn() {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      const form = new URLSearchParams(body)
      seen.push({ path: req.url ?? '', form })
      const json = (status: number, value: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value))
      if (req.url === '/hang') return
      if (req.url === '/500') return json(500, { success: true })
      if (req.url === '/garbage') return res.writeHead(200).end('<html>not json</html>')
      if (req.url === '/v3') {
        // reCAPTCHA v3 answers `v3:{score}:{action}` with that score and action; v2 (`v2`)
        // answers success without a score.
        const [kind, score, action] = (form.get('response') ?? '').split(':')
        if (form.get('secret') !== SECRET) return json(200, { success: false })
        if (kind === 'v2') return json(200, { success: true, hostname: 'example.com' })
        return json(200, { success: true, score: Number(score), action, hostname: 'example.com' })
      }
      const sitekey = form.get('sitekey')
      const success =
        form.get('secret') === SECRET &&
        form.get('response') === GOOD &&
        (sitekey === null || sitekey === 'site-1')
      json(200, success ? { success: true } : { success: false, 'error-codes': ['invalid'] })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

let server: TestServer
let hanging: TestServer
let scored: TestServer
before(async (t) => {
  standIn = await startStandIn()
  server = await startTestServer(t, {
    webhookAllowPrivate: true,
    captchaVerifyUrls: {
      turnstile: `${standIn.url}/ok`,
      hcaptcha: `${standIn.url}/ok`,
      recaptcha: `${standIn.url}/500`,
    },
  })
  hanging = await startTestServer(t, {
    webhookAllowPrivate: true,
    captchaVerifyUrls: { turnstile: `${standIn.url}/hang`, hcaptcha: `${standIn.url}/garbage` },
  })
  scored = await startTestServer(t, {
    webhookAllowPrivate: true,
    captchaVerifyUrls: { recaptcha: `${standIn.url}/v3` },
  })
})
after(() => standIn.close())

async function withCaptcha(on: TestServer, captcha: Record<string, unknown>) {
  const t = await createTenant(on)
  const res = await on.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { captcha },
    {
      token: t.admin.accessToken,
    },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { t, record: res.body }
}

const signup = (on: TestServer, t: TenantFixture, captchaToken?: string) =>
  on.request(
    'POST',
    `/v1/${t.slug}/auth/signup`,
    { email: uniqueEmail(), password: STRONG_PASSWORD, captchaToken },
    { ip: '203.0.113.9' },
  )

describe('siteverify', () => {
  test('Turnstile: a good token signs up, sent with the secret and the caller address; a refused one changes nothing', async () => {
    const { t, record } = await withCaptcha(server, {
      provider: 'turnstile',
      siteKey: 'site-1',
      secret: SECRET,
      on: ['sign_up'],
    })
    assert.deepEqual(record.captcha, {
      provider: 'turnstile',
      siteKey: 'site-1',
      hasSecret: true,
      on: ['sign_up'],
    })
    seen = []
    const ok = await signup(server, t, GOOD)
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal(seen.length, 1)
    assert.equal(seen[0].form.get('secret'), SECRET)
    assert.equal(seen[0].form.get('response'), GOOD)
    assert.equal(seen[0].form.get('remoteip'), '203.0.113.9')
    const refused = await unchanged(server, t.tenantId, () => signup(server, t, 'forged-token'))
    expectError(refused, 400, 'captcha_invalid')
    expectError(
      await unchanged(server, t.tenantId, () => signup(server, t)),
      400,
      'captcha_required',
    )
  })

  test('hCaptcha: the site key is sent, and a token for another site key is refused', async () => {
    const { t } = await withCaptcha(server, {
      provider: 'hcaptcha',
      siteKey: 'site-2',
      secret: SECRET,
      on: ['sign_up'],
    })
    seen = []
    const res = await unchanged(server, t.tenantId, () => signup(server, t, GOOD))
    expectError(res, 400, 'captcha_invalid')
    assert.equal(seen[0].form.get('sitekey'), 'site-2')
  })

  test('a non-2xx answer is captcha_invalid, whatever its body says', async () => {
    const { t } = await withCaptcha(server, {
      provider: 'recaptcha',
      siteKey: 'site-1',
      secret: SECRET,
      on: ['sign_up'],
    })
    expectError(
      await unchanged(server, t.tenantId, () => signup(server, t, GOOD)),
      400,
      'captcha_invalid',
    )
  })

  test('an unreadable answer, and one that never comes (the timeout), are captcha_invalid', async () => {
    for (const provider of ['hcaptcha', 'turnstile']) {
      const { t } = await withCaptcha(hanging, {
        provider,
        siteKey: 'site-1',
        secret: SECRET,
        on: ['sign_up'],
      })
      const res = await unchanged(hanging, t.tenantId, () => signup(hanging, t, GOOD))
      expectError(res, 400, 'captcha_invalid')
    }
  })

  test('the egress guard holds: without WEBHOOK_ALLOW_PRIVATE the loopback stand-in is not called', async (t) => {
    const guarded = await startTestServer(t, {
      captchaVerifyUrls: { turnstile: `${standIn.url}/ok` },
    })
    const { t: tenant } = await withCaptcha(guarded, {
      provider: 'turnstile',
      siteKey: 'site-1',
      secret: SECRET,
      on: ['sign_up'],
    })
    seen = []
    const res = await unchanged(guarded, tenant.tenantId, () => signup(guarded, tenant, GOOD))
    expectError(res, 400, 'captcha_invalid')
    assert.equal(seen.length, 0, 'nothing reached the internal address')
  })
})

describe('the setting', () => {
  test('the secret never leaves: not in GET or PATCH, not in the audit log; kept by a PATCH of the same provider, dropped by another', async () => {
    const { t } = await withCaptcha(server, {
      provider: 'turnstile',
      siteKey: 'site-1',
      secret: SECRET,
      on: ['sign_up', 'sign_in'],
    })
    const token = t.admin.accessToken
    const got = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, { token })
    assert.equal(got.body.captcha.hasSecret, true)
    assert.ok(!JSON.stringify(got.body).includes(SECRET))
    const rows = await auditRows(server, t.tenantId)
    assert.ok(rows.length > 0)
    assert.ok(!JSON.stringify(rows).includes(SECRET), 'no audit row holds the secret')
    const updated = rows.find((r) => r.action === 'TenantUpdated')
    assert.ok(updated, 'a TenantUpdated row')
    assert.deepEqual((updated.metadata as { fields: string[] }).fields, ['captcha'])
    // The same provider without a secret keeps the stored one: still verifies.
    const kept = await server.request(
      'PATCH',
      `/v1/${t.slug}/tenant`,
      { captcha: { provider: 'turnstile', siteKey: 'site-1', on: ['sign_up'] } },
      { token },
    )
    assert.equal(kept.status, 200, JSON.stringify(kept.body))
    assert.equal(kept.body.captcha.hasSecret, true)
    assert.deepEqual(kept.body.captcha.on, ['sign_up'])
    assert.equal((await signup(server, t, GOOD)).status, 200)
    // Another provider needs its own secret.
    const other = await unchanged(server, t.tenantId, () =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { captcha: { provider: 'hcaptcha', siteKey: 'site-1', on: ['sign_up'] } },
        { token },
      ),
    )
    expectError(other, 400, 'validation')
    assert.equal(other.body.details.issues[0].path, 'body.captcha.secret')
  })

  test('bad input is 400 validation and changes nothing', async () => {
    const t = await createTenant(server)
    const cases: [unknown, string][] = [
      [{ provider: 'friendlycaptcha', on: [] }, 'body.captcha'],
      [{ provider: 'altcha', on: ['sign_out'] }, 'body.captcha'],
      [{ provider: 'altcha', on: 'sign_up' }, 'body.captcha'],
      [{ provider: 'altcha', on: ['sign_up', 'sign_up'] }, 'body.captcha'],
      [{ provider: 'altcha' }, 'body.captcha'],
      [{ provider: 'turnstile', secret: SECRET, on: [] }, 'body.captcha.siteKey'],
      [{ provider: 'recaptcha', siteKey: 'k', on: ['sign_in'] }, 'body.captcha.secret'],
      [{ provider: 'altcha', siteKey: 'k', on: [] }, 'body.captcha.siteKey'],
      [{ provider: 'hcaptcha', siteKey: '', secret: SECRET, on: [] }, 'body.captcha'],
      ['altcha', 'body.captcha'],
    ]
    await unchanged(server, t.tenantId, async () => {
      for (const [captcha, path] of cases) {
        const res = await server.request(
          'PATCH',
          `/v1/${t.slug}/tenant`,
          { captcha },
          {
            token: t.admin.accessToken,
          },
        )
        expectError(res, 400, 'validation')
        const paths = (res.body.details.issues as { path: string }[]).map((i) => i.path)
        assert.ok(
          paths.some((p) => p.startsWith(path)),
          `${JSON.stringify(captcha)}: ${paths.join(', ')}`,
        )
      }
    })
  })

  test('a member may not change it (tenant:write)', async () => {
    const t = await createTenant(server)
    const member = await server.request('POST', `/v1/${t.slug}/auth/signup`, {
      email: uniqueEmail(),
      password: STRONG_PASSWORD,
    })
    const res = await unchanged(server, t.tenantId, () =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { captcha: { provider: 'altcha', on: ['sign_up'] } },
        { token: member.body.accessToken },
      ),
    )
    assert.equal(res.status, 403, JSON.stringify(res.body))
  })
})

describe('reCAPTCHA v3 scores', () => {
  const recaptcha = { provider: 'recaptcha', siteKey: 'site-1', secret: SECRET, on: ['sign_up'] }

  test('an answer with a score passes with at least minScore (default 0.5) and the call’s action; a low score or another action is captcha_invalid, nothing changed; a v2 answer passes on success', async () => {
    const { t, record } = await withCaptcha(scored, recaptcha)
    assert.equal(record.captcha.minScore, 0.5, 'the default threshold is shown')
    const ok = await signup(scored, t, 'v3:0.9:sign_up')
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.equal((await signup(scored, t, 'v3:0.5:sign_up')).status, 200, 'the threshold itself')
    for (const token of ['v3:0.3:sign_up', 'v3:0.9:sign_in', 'v3:0.9:', 'v3:nope:sign_up']) {
      const refused = await unchanged(scored, t.tenantId, () => signup(scored, t, token))
      expectError(refused, 400, 'captcha_invalid')
    }
    assert.equal((await signup(scored, t, 'v2')).status, 200, 'reCAPTCHA v2: no score')
  })

  test('minScore is the tenant’s: stored, shown, kept by a PATCH without it; out of 0..1 or for another provider is 400 validation with nothing changed', async () => {
    const { t, record } = await withCaptcha(scored, { ...recaptcha, minScore: 0.8 })
    assert.deepEqual(record.captcha, {
      provider: 'recaptcha',
      siteKey: 'site-1',
      hasSecret: true,
      on: ['sign_up'],
      minScore: 0.8,
    })
    expectError(
      await unchanged(scored, t.tenantId, () => signup(scored, t, 'v3:0.7:sign_up')),
      400,
      'captcha_invalid',
    )
    assert.equal((await signup(scored, t, 'v3:0.8:sign_up')).status, 200)
    const patch = (captcha: unknown) =>
      scored.request('PATCH', `/v1/${t.slug}/tenant`, { captcha }, { token: t.admin.accessToken })
    const kept = await patch({ provider: 'recaptcha', siteKey: 'site-1', on: ['sign_up'] })
    assert.equal(kept.status, 200, JSON.stringify(kept.body))
    assert.equal(kept.body.captcha.minScore, 0.8, 'kept')
    for (const bad of [
      { ...recaptcha, minScore: 1.5 },
      { ...recaptcha, minScore: -0.1 },
      { ...recaptcha, minScore: '0.5' },
      { provider: 'turnstile', siteKey: 'site-1', secret: SECRET, on: ['sign_up'], minScore: 0.5 },
      { provider: 'altcha', on: ['sign_up'], minScore: 0.5 },
    ]) {
      const res = await unchanged(scored, t.tenantId, () => patch(bad))
      expectError(res, 400, 'validation')
    }
    // Another provider forgets the threshold; the record shows none.
    const turnstile = await patch({
      provider: 'turnstile',
      siteKey: 'site-1',
      secret: SECRET,
      on: ['sign_up'],
    })
    assert.equal(turnstile.status, 200, JSON.stringify(turnstile.body))
    assert.equal('minScore' in turnstile.body.captcha, false)
  })
})
