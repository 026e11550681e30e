// CONTRACT §17, Checks: a custom role taken away stops working within 5 s on every
// instance, even with an access token minted before (permissions are read live, as §4's
// revocation is). Two instances share the database (and Redis when REDIS_URL is set); each
// change is made on the first and must be refused by the second. With Redis the second
// reads the database's revocation feed only once a minute, as in revocation.test.ts, so
// nothing but the live read brings the change.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { expectError } from './envelope.ts'
import {
  createTenant,
  eventually,
  signup,
  startSecondInstance,
  startServer,
  type TestServer,
} from './helpers.ts'

let a: TestServer
let b: Awaited<ReturnType<typeof startSecondInstance>>
let slug: string
let adminToken: string
let n = 0

before(async () => {
  a = await startServer()
  b = await startSecondInstance(a, process.env.REDIS_URL ? { revocationPollMs: 60_000 } : {})
  const tenant = await createTenant(a)
  slug = tenant.slug
  adminToken = tenant.admin.accessToken
})
after(async () => {
  await b.close()
  await a.close()
})

const onA = async (method: string, path: string, body?: unknown) => {
  const res = await a.request(method, `/v1/${slug}${path}`, body, { token: adminToken })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}
const usersOnB = (token: string) =>
  b.request('GET', `/v1/${slug}/users?limit=1`, undefined, { token })

/** A Member holding a fresh role with users:read, its access token minted before the role. */
async function viewer() {
  const who = await signup(a, slug)
  const role = (await onA('POST', '/roles', { name: `Viewer ${++n}`, permissions: ['users:read'] }))
    .role
  await onA('PUT', `/users/${who.user.id}/roles`, { roles: [role.name] })
  const token = who.accessToken as string
  // B lets it in with the role: the token names no permission, B reads them.
  assert.equal((await usersOnB(token)).status, 200)
  return { who, role, token }
}

async function refusedOnB(token: string) {
  const refused = await eventually(async () => (await usersOnB(token)).status === 403, 5000)
  assert.ok(refused, 'the second instance still lets the role in after 5 s')
  // Holding no tenant permission any more: the SPEC Member's refusal.
  expectError(await usersOnB(token), 403, 'admin_required')
  // The session itself stays: /me still answers on B.
  assert.equal((await b.request('GET', `/v1/${slug}/me`, undefined, { token })).status, 200)
}

describe('a custom role taken away stops working on every instance within 5 s', () => {
  test('the role taken from the user', async () => {
    const { who, token } = await viewer()
    await onA('PUT', `/users/${who.user.id}/roles`, { roles: [] })
    await refusedOnB(token)
  })

  test("the role's permission taken from the role", async () => {
    const { role, token } = await viewer()
    await onA('PATCH', `/roles/${role.id}`, { permissions: [] })
    await refusedOnB(token)
  })

  test('the role deleted', async () => {
    const { role, token } = await viewer()
    await onA('DELETE', `/roles/${role.id}`)
    await refusedOnB(token)
  })
})
