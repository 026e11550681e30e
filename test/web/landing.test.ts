// The landing page at `/` (issue 20) over HTTP, as a browser without JavaScript uses it:
// it says what the service is and links to /docs and the console; while tenant creation is
// open its form creates a workspace and its first admin through POST /v1/tenants and signs
// that admin in to the workspace's pages; the API's refusals are shown beside their fields
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

async function tenantCount(on: TestServer = server): Promise<number> {
  const rows = await on.deps.db.execute(sql`SELECT count(*)::int AS n FROM tenants`)
  return Number((rows as unknown as { rows: Array<{ n: number }> }).rows[0].n)
}

function workspace(overrides: Record<string, string> = {}) {
  return {
    name: 'Northwind Traders',
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
    assert.equal(new URL(page.url).pathname, `/t/${w.slug}/account`)
    assert.match(textOf(page.html), new RegExp(w.email.replace(/[.+]/g, '\\$&')))
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
    const page = await browser.send('POST', '/', 'name=x', 'text/plain')
    assert.equal(page.status, 415)
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/)
    assert.equal(page.headers.get('content-security-policy'), CSP)
    assert.equal(await tenantCount(), before)
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
