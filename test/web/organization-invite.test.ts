// The hosted page accepting an invitation to an organization (CONTRACT §18), as a browser
// without JavaScript: a new address follows the mail's link, chooses a password and is
// signed in as a member; a signed-in invitee joins with one button; a signed-in person of
// another address is told so and joins nothing; a spent token is refused on the page.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'
import { PageClient, textOf } from './page-client.ts'

let sink: SmtpSink
let server: TestServer
let t: TenantFixture
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  t = await createTenant(server)
})
after(async () => {
  await sink.stop()
})

const admin = () => ({ token: t.admin.accessToken })

async function organization(name: string) {
  const res = await server.request('POST', `/v1/${t.slug}/organizations`, { name }, admin())
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.organization.id as string
}

/** Invites `email` with the mail sent, and answers the link the mail holds (path only). */
async function mailedLink(orgId: string, email: string) {
  const res = await server.request(
    'POST',
    `/v1/${t.slug}/organizations/${orgId}/invitations`,
    { email },
    admin(),
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const mail = await sink.waitFor(email)
  const line = mail.text
    .split('\n')
    .find((l) => l.includes(`/t/${t.slug}/organization-invite?token=`))
  assert.ok(line, mail.text)
  return new URL(line).pathname + new URL(line).search
}

const members = async (orgId: string) =>
  (
    await server.request('GET', `/v1/${t.slug}/organizations/${orgId}/members`, undefined, admin())
  ).body.items.map((m: { email: string }) => m.email)

async function signIn(c: PageClient, email: string) {
  await c.get(`/t/${t.slug}/sign-in`)
  const page = await c.post(`/t/${t.slug}/sign-in`, { email, password: STRONG_PASSWORD })
  assert.equal(page.status, 200, textOf(page.html))
}

test('a new address follows the link, chooses a password, and is a signed-in member', async () => {
  const orgId = await organization('Orbital Freight')
  const email = uniqueEmail('page-new')
  const link = await mailedLink(orgId, email)
  const c = new PageClient(server)
  const shown = await c.get(link)
  assert.equal(shown.status, 200)
  assert.match(textOf(shown.html), /Choose a password/)
  const token = new URLSearchParams(link.split('?')[1]).get('token') ?? ''
  const done = await c.post(`/t/${t.slug}/organization-invite`, {
    token,
    password: STRONG_PASSWORD,
  })
  assert.equal(done.status, 200, textOf(done.html))
  assert.ok(done.url.endsWith(`/t/${t.slug}/account`), done.url)
  assert.deepEqual(await members(orgId), [email])
  // The account page lists the organization.
  assert.match(textOf(done.html), /Your organizations/)
  assert.match(textOf(done.html), /Orbital Freight/)
  // The link again: spent, refused on the page.
  await c.get(link)
  const again = await c.post(`/t/${t.slug}/organization-invite`, { token })
  assert.equal(again.status, 400)
  assert.match(textOf(again.html), /not valid/)
})

test('a signed-in invitee joins with one button; another address is told and joins nothing', async () => {
  const orgId = await organization('Lunar Logistics')
  const invitee = await signup(server, t.slug)
  const someoneElse = await signup(server, t.slug)
  const link = await mailedLink(orgId, invitee.email)
  const token = new URLSearchParams(link.split('?')[1]).get('token') ?? ''

  const wrong = new PageClient(server, '203.0.113.11')
  await signIn(wrong, someoneElse.email)
  await wrong.get(link)
  const refused = await wrong.post(`/t/${t.slug}/organization-invite`, { token })
  assert.equal(refused.status, 403)
  assert.match(textOf(refused.html), /another email address/)
  assert.deepEqual(await members(orgId), [])

  const c = new PageClient(server, '203.0.113.12')
  await signIn(c, invitee.email)
  const shown = await c.get(link)
  assert.match(textOf(shown.html), /Join the organization/)
  const joined = await c.post(`/t/${t.slug}/organization-invite`, { token })
  assert.equal(joined.status, 200, textOf(joined.html))
  assert.match(textOf(joined.html), /You joined Lunar Logistics/)
  assert.deepEqual(await members(orgId), [invitee.email])
})

test('the page without a token says the link is incomplete', async () => {
  const c = new PageClient(server)
  const page = await c.get(`/t/${t.slug}/organization-invite`)
  assert.equal(page.status, 400)
  assert.match(textOf(page.html), /incomplete/)
})
