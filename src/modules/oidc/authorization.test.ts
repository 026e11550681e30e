// The authorization endpoint's edge (CONTRACT §11, Flows and Errors), before any page: a
// valid request goes to the hosted sign-in page (interactions.url) with its interaction
// stored for any instance; an unknown client, another tenant's client or an unregistered
// redirect URI is an HTML page with status 400, never a redirect; other errors (plain or
// missing PKCE for a public client, prompt=none without a session) redirect back with
// `error`, `state` and `iss` (RFC 9207).
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { before, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { createApplication, issuerOf } from '../../../test/fixtures/oidc.ts'
import {
  createTenant,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { and, eq } from '../../db/orm.ts'
import { oidcModels } from '../../db/schema.ts'

let server: TestServer
let t: TenantFixture
let spa: { clientId: string }
let web: { clientId: string }
const REDIRECT = 'https://app.example.com/callback'
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' // RFC 7636 Appendix B

before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  const made = async (type: string) =>
    (
      await createApplication(server, t.slug, t.admin.accessToken, {
        name: type,
        type,
        redirectUris: [REDIRECT],
      })
    ).application
  spa = await made('spa')
  web = await made('web')
})

/** GET {issuer}/auth with `params`, redirects not followed. */
function authorize(params: Record<string, string>, slug = t.slug) {
  const query = new URLSearchParams({
    response_type: 'code',
    scope: 'openid email',
    redirect_uri: REDIRECT,
    state: randomBytes(8).toString('hex'),
    ...params,
  })
  return fetch(`${server.url}/oidc/${slug}/auth?${query}`, { redirect: 'manual' })
}

test('a valid authorization request goes to the hosted page /t/{slug}/authorize/{uid}, its interaction stored', async () => {
  const res = await authorize({
    client_id: spa.clientId,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  })
  assert.equal(res.status, 303)
  const location = new URL(res.headers.get('location') as string)
  const prefix = `${server.deps.config.publicUrl}/t/${t.slug}/authorize/`
  assert.ok(location.href.startsWith(prefix), location.href)
  const uid = location.href.slice(prefix.length)
  const rows = await server.deps.db
    .select()
    .from(oidcModels)
    .where(
      and(
        eq(oidcModels.tenantId, t.tenantId),
        eq(oidcModels.model, 'Interaction'),
        eq(oidcModels.id, uid),
      ),
    )
  assert.equal(rows.length, 1, 'the interaction is in PostgreSQL, for any instance')
  assert.equal(
    rows[0].payload.params && (rows[0].payload.params as { client_id: string }).client_id,
    spa.clientId,
  )
})

test('an unknown client, another tenant’s client or an unregistered redirect URI: an HTML 400, never a redirect, nothing stored', async () => {
  const other = await createTenant(server)
  const theirs = (
    await createApplication(server, other.slug, other.admin.accessToken, {
      name: 'theirs',
      type: 'web',
      redirectUris: [REDIRECT],
    })
  ).application
  const cases: Record<string, string>[] = [
    { client_id: 'no-such-client' },
    { client_id: theirs.clientId },
    { client_id: web.clientId, redirect_uri: 'https://evil.example.com/callback' },
    { client_id: web.clientId, redirect_uri: `${REDIRECT}/more` },
  ]
  for (const params of cases) {
    const res = await unchanged(server, [t.tenantId, other.tenantId], () => authorize(params))
    assert.equal(res.status, 400, JSON.stringify(params))
    assert.equal(res.headers.get('location'), null)
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/)
    const page = await res.text()
    assert.ok(!page.includes('<script'), 'the page holds no script')
  }
})

test('PKCE: plain is refused and a public client must send S256; the error redirects with error, state and iss (RFC 9207)', async () => {
  const cases: Record<string, string>[] = [
    { client_id: spa.clientId, code_challenge: CHALLENGE, code_challenge_method: 'plain' },
    { client_id: spa.clientId },
  ]
  for (const params of cases) {
    const state = randomBytes(8).toString('hex')
    const res = await unchanged(server, t.tenantId, () => authorize({ ...params, state }))
    assert.equal(res.status, 303, JSON.stringify(params))
    const location = new URL(res.headers.get('location') as string)
    assert.equal(location.origin + location.pathname, REDIRECT)
    assert.equal(location.searchParams.get('error'), 'invalid_request')
    assert.equal(location.searchParams.get('state'), state)
    assert.equal(location.searchParams.get('iss'), issuerOf(server, t.slug))
  }
})

test('prompt=none without a session answers login_required to the application, with iss', async () => {
  const state = randomBytes(8).toString('hex')
  const res = await authorize({
    client_id: web.clientId,
    prompt: 'none',
    state,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
  })
  assert.equal(res.status, 303)
  const location = new URL(res.headers.get('location') as string)
  assert.equal(location.searchParams.get('error'), 'login_required')
  assert.equal(location.searchParams.get('state'), state)
  assert.equal(location.searchParams.get('iss'), issuerOf(server, t.slug))
})
