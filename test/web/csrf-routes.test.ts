// The hosted pages' CSRF rule over every route that takes a POST (CONTRACT §16): each one
// refuses a request without the form's field before it does anything. The routes are read
// from the server's own route tree, so a page route added without the check (src/web/csrf.ts)
// fails here until it refuses, and one added with it only needs its line in the table.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { tenantSnapshot } from '../db.ts'
import {
  createTenant,
  randomIp,
  registeredRoutes,
  startTestServer,
  type TestServer,
} from '../helpers.ts'
import { PageClient, textOf } from './page-client.ts'

let server: TestServer

before(async (ctx) => {
  server = await startTestServer(ctx)
})

/**
 * Every page route that takes a POST, and how it refuses: the expired-form page (`form`),
 * or JSON for a route the pages' script calls (`script`).
 */
const ROUTES: Record<string, 'form' | 'script'> = {
  '/account/applications/:clientId/revoke': 'form',
  '/sign-in': 'form',
  '/sign-in/second-factor': 'form',
  '/sign-in/new-password': 'form',
  '/sign-in/sso': 'form',
  '/sign-in/sso/second-factor': 'form',
  '/sign-in/code': 'form',
  '/sign-in/code/verify': 'form',
  '/sign-in/code/second-factor': 'form',
  '/sign-in/code/enrol': 'form',
  '/sign-in/passkey/options': 'script',
  '/sign-in/passkey': 'script',
  '/sign-up': 'form',
  '/invite': 'form',
  '/organization-invite': 'form',
  '/sign-out': 'form',
  '/reset-password': 'form',
  '/reset-password/confirm': 'form',
  '/verify-email': 'form',
  '/verify-email/resend': 'form',
  '/account/password': 'form',
  '/account/password/set': 'form',
  '/account/totp': 'form',
  '/account/totp/verify': 'form',
  '/account/sessions/:id/end': 'form',
  '/account/recovery-codes': 'form',
  '/account/export': 'form',
  '/account/forget-devices': 'form',
  '/account/locale': 'form',
  '/account/verify': 'form',
  '/account/verify/confirm': 'form',
  '/account/delete': 'form',
  '/account/confirm': 'form',
  '/account/confirm/continue': 'form',
  '/account/confirm/passkey/options': 'script',
  '/account/confirm/passkey': 'script',
  '/account/passkeys/options': 'script',
  '/account/passkeys': 'script',
  '/account/passkeys/:id/delete': 'form',
  '/account/connect/:id': 'form',
  '/account/identities/:id/remove': 'form',
  '/authorize/:uid/consent': 'form',
  '/authorize/:uid/organization': 'form',
  '/authorize/:uid/second-factor': 'form',
}

const PREFIX = '/t/:tenantSlug'

test('the table lists every page route that takes a POST', () => {
  const posted = registeredRoutes(server.app)
    .filter((r) => r.method === 'POST' && r.path.startsWith(`${PREFIX}/`))
    .map((r) => r.path.slice(PREFIX.length))
  assert.ok(posted.includes('/sign-in'), 'the route tree was read')
  assert.deepEqual(posted.toSorted(), Object.keys(ROUTES).toSorted())
})

test('csrf.every-page-route: a POST without the form field is refused 403 by every page route, and changes nothing', async () => {
  const t = await createSignedIn()
  const { c, slug, tenantId } = t
  const before = await tenantSnapshot(server, tenantId)
  for (const [route, kind] of Object.entries(ROUTES)) {
    const path = `/t/${slug}${route.replace(':id', t.sessionId).replace(':uid', 'a'.repeat(21))}`
    const fields = { email: t.email, password: t.password, confirm: 'DELETE', decision: 'allow' }
    const page =
      kind === 'form'
        ? await c.send('POST', path, new URLSearchParams(fields).toString())
        : await c.send('POST', path, JSON.stringify(fields), 'application/json')
    assert.equal(page.status, 403, route)
    if (kind === 'form') {
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/, route)
      assert.match(textOf(page.html), /This form has expired/, route)
    } else {
      assert.deepEqual(
        JSON.parse(page.html),
        { error: 'This page has expired. Reload it and try again.' },
        route,
      )
    }
  }
  assert.deepEqual(await tenantSnapshot(server, tenantId), before)
  // The session outlived every refused request: the account page still opens.
  const account = await c.get(`/t/${slug}/account`)
  assert.equal(account.status, 200)
  assert.match(account.url, /\/account$/)
})

/** A tenant and a browser signed in to its pages, with its session's id. */
async function createSignedIn() {
  const t = await createTenant(server)
  const c = new PageClient(server, randomIp())
  await c.get(`/t/${t.slug}/sign-in`)
  const page = await c.post(`/t/${t.slug}/sign-in`, {
    email: t.adminEmail,
    password: t.adminPassword,
  })
  assert.match(page.url, /\/account$/, textOf(page.html))
  // The page's own session (not the one tenant creation answered): ending it would show.
  const sessions = await server.request('GET', `/v1/${t.slug}/me/sessions`, undefined, {
    token: t.admin.accessToken,
  })
  const own = sessions.body.items.find((s: { current: boolean }) => !s.current)
  assert.ok(own, JSON.stringify(sessions.body))
  const sessionId = String(own.id)
  return {
    c,
    slug: t.slug,
    tenantId: t.tenantId,
    email: t.adminEmail,
    password: t.adminPassword,
    sessionId,
  }
}
