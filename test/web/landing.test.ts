// The landing page at `/` (issue 20) over HTTP, as a browser without JavaScript uses it:
// it says what the service is and links to /docs and the console; while tenant creation is
// open its form creates a workspace and its first admin through POST /v1/tenants and signs
// that admin in to the workspace's pages and, by a one-time handoff, to the console; the
// handoff opens once, briefly, in that browser only; the API's refusals are shown beside their fields
// and create nothing; the form's CSRF field is a signed double submit bound to the
// browser's secret; with TENANT_CREATION_TOKEN set there is no form and a POST is refused.
import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import { sql } from '../../src/db/orm.ts'
import { CSP } from '../../src/web/http.ts'
import {
  STRONG_PASSWORD,
  startTestServer,
  type TestServer,
  uniqueEmail,
  uniqueSlug,
} from '../helpers.ts'
import { PageClient, textOf } from './page-client.ts'

let server: TestServer
before(async (ctx) => {
  server = await startTestServer(ctx)
})

/**
 * The workspaces this file made: only its forms name a workspace so (workspace() below), and
 * its tests run one at a time, so other files creating tenants on a shared database at the
 * same moment never move the count (counting every tenant did, on PostgreSQL).
 */
async function tenantCount(on: TestServer = server): Promise<number> {
  const rows = await on.deps.db.execute(
    sql`SELECT count(*)::int AS n FROM tenants WHERE name = ${WORKSPACE_NAME}`,
  )
  return Number((rows as unknown as { rows: Array<{ n: number }> }).rows[0].n)
}

const WORKSPACE_NAME = 'Northwind Traders'

function workspace(overrides: Record<string, string> = {}) {
  return {
    name: WORKSPACE_NAME,
    slug: uniqueSlug('nw'),
    email: uniqueEmail('founder'),
    password: STRONG_PASSWORD,
    ...overrides,
  }
}

/** The field error drawn beside `name` (its id is `{name}-error`). */
function fieldError(html: string, name: string): string | undefined {
  const match = new RegExp(`<p class="field-error" id="${name}-error">([^<]*)</p>`).exec(html)
  return match?.[1]
}

describe('landing page', () => {
  test('GET / is an HTML page with links to /docs and the console, and the form', async () => {
    const browser = new PageClient(server)
    const page = await browser.get('/')
    assert.equal(page.status, 200)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(page.headers.get('content-security-policy'), CSP)
    assert.equal(page.headers.get('x-frame-options'), 'DENY')
    assert.equal(page.headers.get('cross-origin-opener-policy'), 'same-origin')
    assert.doesNotMatch(page.html, /<script>|<script [^>]*>[^<]/, 'no inline script')
    assert.match(page.html, /href="\/docs"/)
    assert.match(page.html, /href="\/console\/"/)
    assert.match(page.html, /<form method="post" action="\/"/)
    assert.ok(browser.csrf().length > 0)
    assert.match(textOf(page.html), /Create a workspace/)
  })

  test('HEAD / answers 200 with no body', async () => {
    const res = await fetch(new URL('/', server.url), { method: 'HEAD' })
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(await res.text(), '')
  })

  test('the form creates the workspace and its admin, signed in to its pages; the admin can log in through the API', async () => {
    const browser = new PageClient(server)
    await browser.get('/')
    const w = workspace()
    const page = await browser.post('/', w)
    assert.equal(page.status, 200)
    // The admin lands in the console (issue 36), and is signed in to the pages as well.
    assert.equal(new URL(page.url).pathname, '/console/')
    const account = await browser.get(`/t/${w.slug}/account`)
    assert.equal(new URL(account.url).pathname, `/t/${w.slug}/account`)
    assert.match(textOf(account.html), new RegExp(w.email.replace(/[.+]/g, '\\$&')))
    const login = await server.request('POST', `/v1/${w.slug}/auth/login`, {
      email: w.email,
      password: w.password,
    })
    assert.equal(login.status, 200)
    assert.equal(login.body.user.role, 'Admin')
    const tenant = await server.request('GET', `/v1/${w.slug}/tenant`, undefined, {
      token: login.body.accessToken,
    })
    assert.equal(tenant.status, 200)
    assert.equal(tenant.body.tenant?.name ?? tenant.body.name, w.name)
  })

  const refusals: Array<[string, Record<string, string>, string, RegExp]> = [
    [
      'a common password (password_too_weak)',
      { password: 'qwerty123456' },
      'password',
      /too common/,
    ],
    [
      'a password shorter than 12 characters',
      { password: 'short-pw-11' },
      'password',
      /at least 12/,
    ],
    [
      'a password equal to the email (password_too_weak)',
      { email: 'same@example.com', password: 'same@example.com' },
      'password',
      /same as your email/,
    ],
    ['an invalid slug', { slug: '-Not_A_Slug-' }, 'slug', /lowercase letters/],
    ['a reserved slug', { slug: 'docs' }, 'slug', /reserved/],
    ['an empty name', { name: '' }, 'name', /name for the workspace/],
    ['an invalid email', { email: 'not-an-email' }, 'email', /valid email/],
  ]
  for (const [what, overrides, fieldName, message] of refusals) {
    test(`rule: ${what} is shown beside its field and creates nothing`, async () => {
      const browser = new PageClient(server)
      await browser.get('/')
      const w = workspace(overrides)
      const before = await tenantCount()
      const page = await browser.post('/', w)
      assert.equal(page.status, 400)
      assert.match(fieldError(page.html, fieldName) ?? '', message, `the error beside ${fieldName}`)
      assert.match(page.html, new RegExp(`id="${fieldName}"[^>]*aria-invalid="true"`))
      assert.equal(await tenantCount(), before)
      // What was typed is kept, the password never.
      if (fieldName !== 'name') assert.match(page.html, /value="Northwind Traders"/)
      assert.doesNotMatch(page.html, /type="password" value=/)
    })
  }

  test('rule: a taken slug is shown beside its field (slug_taken) and creates nothing', async () => {
    const browser = new PageClient(server)
    await browser.get('/')
    const first = workspace()
    assert.equal((await browser.post('/', first)).status, 200)
    const again = new PageClient(server, '203.0.113.11')
    await again.get('/')
    const before = await tenantCount()
    const page = await again.post('/', workspace({ slug: first.slug }))
    assert.equal(page.status, 400)
    assert.match(fieldError(page.html, 'slug') ?? '', /taken/)
    assert.equal(await tenantCount(), before)
  })

  test('rule: a POST without the CSRF field, with a forged one or another browser’s, creates nothing', async () => {
    const victim = new PageClient(server)
    await victim.get('/')
    const other = new PageClient(server, '203.0.113.12')
    await other.get('/')
    const before = await tenantCount()
    for (const csrf of ['', 'forged', other.csrf()]) {
      const page = await victim.post('/', { ...workspace(), _csrf: csrf })
      assert.equal(page.status, 400)
      assert.match(textOf(page.html), /expired/)
    }
    // No cookie at all (a cross-site form post without the browser's secret).
    const cookieless = new PageClient(server, '203.0.113.13')
    const page = await cookieless.post('/', { ...workspace(), _csrf: victim.csrf() })
    assert.equal(page.status, 400)
    assert.equal(await tenantCount(), before)
  })

  test('a body the page cannot read is answered as a page, not the JSON envelope, and creates nothing', async () => {
    const browser = new PageClient(server)
    await browser.get('/')
    const before = await tenantCount()
    const page = await browser.send('POST', '/', `name=${WORKSPACE_NAME}`, 'text/plain')
    assert.equal(page.status, 415)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(page.headers.get('content-security-policy'), CSP)
    assert.equal(await tenantCount(), before)
  })

  /** Creates a workspace with the form in `browser`; the handoff code its redirect carried. */
  async function createWithForm(browser: PageClient) {
    await browser.get('/')
    const w = workspace()
    const page = await browser.post('/', w)
    const landed = new URL(page.url)
    assert.equal(landed.pathname, '/console/')
    assert.equal(landed.searchParams.get('tenant'), w.slug)
    const code = decodeURIComponent(/^#handoff=(.+)$/.exec(landed.hash)?.[1] ?? '')
    assert.ok(code.length > 0, `a handoff code in ${landed.hash}`)
    // The fragment holds no token: nothing a token of the service looks like.
    assert.doesNotMatch(code, /^eyJ|\./)
    return { w, code }
  }

  /** POST /console/handoff from `browser` (its cookies), as the console's fetch sends it. */
  async function exchange(browser: PageClient, code: string) {
    const res = await browser.send(
      'POST',
      '/console/handoff',
      JSON.stringify({ code }),
      'application/json',
    )
    return { status: res.status, body: JSON.parse(res.html) }
  }

  test('rule: the console handoff signs the new admin in to the console once: a second use is refused and ends that session', async () => {
    const browser = new PageClient(server)
    const { w, code } = await createWithForm(browser)
    const first = await exchange(browser, code)
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.equal(first.body.tenant, w.slug)
    const me = await server.request('GET', `/v1/${w.slug}/me`, undefined, {
      token: first.body.session.accessToken,
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.email, w.email)
    assert.equal(me.body.role, 'Admin')

    const again = await exchange(browser, code)
    assert.equal(again.status, 400)
    assert.equal(again.body.code, 'BAD_REQUEST')
    assert.equal(again.body.details.reason, 'handoff_invalid')
    assert.equal(again.body.session, undefined)
    // The replay spent a rotated refresh token: the family is revoked (CONTRACT §4).
    const refresh = await server.request('POST', `/v1/${w.slug}/auth/refresh`, {
      refreshToken: first.body.session.refreshToken,
    })
    assert.equal(refresh.status, 401)
  })

  test('rule: the console handoff opens only in the browser that submitted the form, only within 60 s, and a forged code opens nothing', async () => {
    const browser = new PageClient(server)
    const { w, code } = await createWithForm(browser)
    const sessionsBefore = await server.request('POST', `/v1/${w.slug}/auth/login`, {
      email: w.email,
      password: w.password,
    })
    const count = async () =>
      (
        await server.request('GET', `/v1/${w.slug}/me/sessions?limit=50`, undefined, {
          token: sessionsBefore.body.accessToken,
        })
      ).body.items.length
    const live = await count()

    // Another browser (another landing secret, or none) holding the URL: refused.
    const other = new PageClient(server)
    assert.equal((await exchange(other, code)).status, 400)
    await other.get('/')
    assert.equal((await exchange(other, code)).status, 400)
    // A code that is not the service's, or altered: refused.
    assert.equal((await exchange(browser, 'not-a-code')).status, 400)
    // One character in the middle changed: every bit of it is in the sealed bytes (the last
    // characters of base64url may carry padding bits, and may already read "AA").
    const middle = Math.floor(code.length / 2)
    const altered = `${code.slice(0, middle)}${code[middle] === 'A' ? 'B' : 'A'}${code.slice(middle + 1)}`
    assert.equal((await exchange(browser, altered)).status, 400)
    assert.equal(await count(), live, 'no session was opened or ended')

    // Past its 60 seconds, even the right browser is refused.
    server.clock.advance(61)
    const late = await exchange(browser, code)
    assert.equal(late.status, 400)
    assert.equal(late.body.session, undefined)
  })

  test('rule: within its 60 s and in its own browser, a handoff refused elsewhere still opens', async () => {
    const browser = new PageClient(server)
    const { code } = await createWithForm(browser)
    assert.equal((await exchange(new PageClient(server), code)).status, 400)
    server.clock.advance(30)
    assert.equal((await exchange(browser, code)).status, 200)
  })

  test('the page is not an API operation: absent from the OpenAPI document', async () => {
    const doc = await server.request('GET', '/v1/openapi.json')
    assert.equal(doc.status, 200)
    assert.equal(doc.body.paths['/'], undefined)
  })
})

describe('landing page with TENANT_CREATION_TOKEN set', () => {
  test('rule: with a creation token there is no form, and a POST is refused and creates nothing', async (ctx) => {
    const closed = await startTestServer(ctx, { tenantCreationToken: 'operator-only-token-0001' })
    const browser = new PageClient(closed)
    const page = await browser.get('/')
    assert.equal(page.status, 200)
    assert.doesNotMatch(page.html, /<form/)
    assert.match(page.html, /href="\/docs"/)
    const before = await tenantCount(closed)
    const refused = await browser.post('/', workspace())
    assert.equal(refused.status, 403)
    assert.equal(await tenantCount(closed), before)
  })
})
