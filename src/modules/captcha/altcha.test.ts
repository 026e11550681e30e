// CAPTCHA with ALTCHA (CONTRACT §21) over real HTTP, on the test's database (and Redis when
// REDIS_URL is set): a challenge of GET captcha/challenge solved by altcha-lib's own solver
// passes sign-up, login, the reset request and the login-code request where `captcha.on`
// names them; a missing answer is captcha_required, a replayed, forged, expired or other
// tenant's one captcha_invalid, each changing nothing and mailing nothing; the check comes
// before the password is looked at (no failed sign-in recorded); actions not in `on` are
// unaffected; two concurrent uses of one answer let exactly one through.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { solveChallenge } from 'altcha-lib'
import { deriveKey } from 'altcha-lib/algorithms/pbkdf2'
import type { Challenge } from 'altcha-lib/types'
import { setTenant, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { CHALLENGE_TTL_SECONDS } from './altcha.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const ALL = ['sign_up', 'sign_in', 'password_reset', 'login_code']

async function altchaTenant(on: string[] = ALL): Promise<TenantFixture> {
  const t = await createTenant(server)
  await setTenant(server, t.slug, { authPolicy: 'PasswordAndPasswordless' })
  const res = await server.request(
    'PATCH',
    `/v1/${t.slug}/tenant`,
    { captcha: { provider: 'altcha', on } },
    { token: t.admin.accessToken },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return t
}

/** A challenge of the tenant's, solved as the widget would, as a captchaToken. */
async function solved(slug: string): Promise<string> {
  const res = await server.request('GET', `/v1/${slug}/captcha/challenge`, undefined, {
    ip: randomIp(),
  })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.headers.get('cache-control'), 'no-store')
  const challenge = res.body as Challenge
  const solution = await solveChallenge({ challenge, deriveKey })
  assert.ok(solution, 'altcha-lib solves the challenge')
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64')
}

const post = (slug: string, path: string, body: Record<string, unknown>) =>
  server.request('POST', `/v1/${slug}/auth/${path}`, body, { ip: randomIp() })

describe('ALTCHA', () => {
  test('a solved challenge signs up once; its replay, a missing and a garbage answer change nothing', async () => {
    const t = await altchaTenant()
    const token = await solved(t.slug)
    const email = uniqueEmail()
    const ok = await post(t.slug, 'signup', {
      email,
      password: STRONG_PASSWORD,
      captchaToken: token,
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    const replay = await unchanged(server, t.tenantId, () =>
      post(t.slug, 'signup', {
        email: uniqueEmail(),
        password: STRONG_PASSWORD,
        captchaToken: token,
      }),
    )
    expectError(replay, 400, 'captcha_invalid')
    const missing = await unchanged(server, t.tenantId, () =>
      post(t.slug, 'signup', { email: uniqueEmail(), password: STRONG_PASSWORD }),
    )
    expectError(missing, 400, 'captcha_required')
    for (const captchaToken of ['not-base64-json', Buffer.from('{"a":1}').toString('base64')]) {
      const bad = await unchanged(server, t.tenantId, () =>
        post(t.slug, 'signup', { email: uniqueEmail(), password: STRONG_PASSWORD, captchaToken }),
      )
      expectError(bad, 400, 'captcha_invalid')
    }
  })

  test('a forged answer (a wrong derived key, a challenge altered after signing, an unsigned one) is captcha_invalid', async () => {
    const t = await altchaTenant()
    const token = await solved(t.slug)
    const { challenge, solution } = JSON.parse(Buffer.from(token, 'base64').toString())
    const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64')
    const forged = [
      forge({
        challenge,
        solution: {
          ...solution,
          derivedKey: `${solution.derivedKey[0] === '0' ? '1' : '0'}${solution.derivedKey.slice(1)}`,
        },
      }),
      forge({
        challenge: { ...challenge, parameters: { ...challenge.parameters, cost: 1 } },
        solution,
      }),
      forge({ challenge: { parameters: challenge.parameters }, solution }),
    ]
    for (const captchaToken of forged) {
      const res = await unchanged(server, t.tenantId, () =>
        post(t.slug, 'signup', { email: uniqueEmail(), password: STRONG_PASSWORD, captchaToken }),
      )
      expectError(res, 400, 'captcha_invalid')
    }
    // The genuine answer was not spent by the forgeries.
    const ok = await post(t.slug, 'signup', {
      email: uniqueEmail(),
      password: STRONG_PASSWORD,
      captchaToken: token,
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
  })

  test("another tenant's answer is captcha_invalid here", async () => {
    const here = await altchaTenant()
    const there = await altchaTenant()
    const token = await solved(there.slug)
    const res = await unchanged(server, here.tenantId, () =>
      post(here.slug, 'signup', {
        email: uniqueEmail(),
        password: STRONG_PASSWORD,
        captchaToken: token,
      }),
    )
    expectError(res, 400, 'captcha_invalid')
  })

  test('an answer given after its challenge expired is captcha_invalid', async () => {
    const t = await altchaTenant()
    const token = await solved(t.slug)
    server.clock.advance(CHALLENGE_TTL_SECONDS + 1)
    const res = await unchanged(server, t.tenantId, () =>
      post(t.slug, 'signup', {
        email: uniqueEmail(),
        password: STRONG_PASSWORD,
        captchaToken: token,
      }),
    )
    expectError(res, 400, 'captcha_invalid')
  })

  test('login: the CAPTCHA is checked before the password (a wrong one without an answer records no failure)', async () => {
    const t = await altchaTenant(['sign_in'])
    // sign_up is not in `on`: a sign-up needs no answer.
    const email = uniqueEmail()
    const created = await post(t.slug, 'signup', { email, password: STRONG_PASSWORD })
    assert.equal(created.status, 200, JSON.stringify(created.body))
    const missing = await unchanged(server, t.tenantId, () =>
      post(t.slug, 'login', { email, password: 'wrong-password-entirely-1' }),
    )
    expectError(missing, 400, 'captcha_required')
    const ok = await post(t.slug, 'login', {
      email,
      password: STRONG_PASSWORD,
      captchaToken: await solved(t.slug),
    })
    assert.equal(ok.status, 200, JSON.stringify(ok.body))
    assert.ok(ok.body.accessToken)
  })

  test('reset and login-code requests: without an answer nothing is mailed; with one the code is', async () => {
    const t = await altchaTenant(['password_reset', 'login_code'])
    const email = uniqueEmail()
    assert.equal((await post(t.slug, 'signup', { email, password: STRONG_PASSWORD })).status, 200)
    for (const path of ['request-password-reset', 'request-login-code']) {
      const res = await unchanged(server, t.tenantId, () => post(t.slug, path, { email }), { sink })
      expectError(res, 400, 'captcha_required')
    }
    await server.deps.mailer.drain()
    const mails = sink.to(email).length
    for (const path of ['request-password-reset', 'request-login-code']) {
      const res = await post(t.slug, path, { email, captchaToken: await solved(t.slug) })
      assert.equal(res.status, 200, JSON.stringify(res.body))
    }
    await server.deps.mailer.drain()
    assert.equal(sink.to(email).length, mails + 2, 'both codes mailed')
  })

  test('actions not in `on` are unaffected; a tenant without a CAPTCHA has no challenge', async () => {
    const t = await altchaTenant(['login_code'])
    const email = uniqueEmail()
    assert.equal((await post(t.slug, 'signup', { email, password: STRONG_PASSWORD })).status, 200)
    assert.equal((await post(t.slug, 'login', { email, password: STRONG_PASSWORD })).status, 200)
    assert.equal((await post(t.slug, 'request-password-reset', { email })).status, 200)
    const config = await server.request('GET', `/v1/${t.slug}/auth/config`)
    assert.deepEqual(config.body.captcha, { provider: 'altcha', siteKey: null, on: ['login_code'] })
    const plain = await createTenant(server)
    assert.equal((await server.request('GET', `/v1/${plain.slug}/auth/config`)).body.captcha, null)
    const none = await server.request('GET', `/v1/${plain.slug}/captcha/challenge`)
    expectError(none, 404, 'not_found')
    const off = await server.request(
      'PATCH',
      `/v1/${t.slug}/tenant`,
      { captcha: null },
      { token: t.admin.accessToken },
    )
    assert.equal(off.status, 200, JSON.stringify(off.body))
    assert.equal(off.body.captcha, null)
    assert.equal((await post(t.slug, 'request-login-code', { email })).status, 200)
  })

  test('single use under a race: two concurrent sign-ups with one answer, exactly one passes', async () => {
    const t = await altchaTenant()
    const token = await solved(t.slug)
    const answers = await Promise.all(
      [0, 1, 2].map(() =>
        post(t.slug, 'signup', {
          email: uniqueEmail(),
          password: STRONG_PASSWORD,
          captchaToken: token,
        }),
      ),
    )
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 400, 400])
    for (const a of answers.filter((a) => a.status === 400)) expectError(a, 400, 'captcha_invalid')
  })
})
