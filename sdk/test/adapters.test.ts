// The Fastify, Express and Hono adapters, each with a tiny app: a valid access token
// reaches the route with `auth` set to its claims; none, a bad one or another tenant's
// gets 401 with the service's error envelope.
import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { before, test } from 'node:test'
import express from 'express'
import Fastify from 'fastify'
import { Hono } from 'hono'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../test/helpers.ts'
import {
  type AccessTokenClaims,
  expressAuth,
  fastifyAuth,
  honoAuth,
  type VerifyOptions,
} from '../src/index.ts'

let server: TestServer
let tenant: TenantFixture
let options: VerifyOptions
let token: string
let userId: string
let foreignToken: string
before(async (ctx) => {
  server = await startTestServer(ctx)
  tenant = await createTenant(server)
  options = {
    issuer: 'http://auth.test',
    tenantId: tenant.tenantId,
    secret: server.deps.config.jwtSecret,
  }
  const user = await signup(server, tenant.slug)
  token = user.accessToken
  userId = user.user.id
  const other = await createTenant(server)
  foreignToken = (await signup(server, other.slug)).accessToken
})

/** The answers of a protected route for a good token, none, a bad one and another tenant's. */
async function probe(get: (authorization?: string) => Promise<{ status: number; body: any }>) {
  const ok = await get(`Bearer ${token}`)
  assert.equal(ok.status, 200)
  assert.equal(ok.body.sub, userId)
  assert.equal(ok.body.tid, tenant.tenantId)
  for (const authorization of [undefined, 'Bearer nope', `Bearer ${foreignToken}`, token]) {
    const refused = await get(authorization)
    assert.equal(refused.status, 401, String(authorization))
    assert.equal(refused.body.code, 'UNAUTHORIZED')
    assert.equal(refused.body.details.reason, 'token_invalid')
  }
}

test('fastifyAuth: a preHandler that sets request.auth', async () => {
  const app = Fastify()
  app.get('/private', { preHandler: fastifyAuth(options) }, async (request) => {
    return (request as unknown as { auth: AccessTokenClaims }).auth
  })
  await probe(async (authorization) => {
    const res = await app.inject({
      method: 'GET',
      url: '/private',
      headers: authorization ? { authorization } : {},
    })
    return { status: res.statusCode, body: res.json() }
  })
  await app.close()
})

test('expressAuth: middleware that sets req.auth', async (t) => {
  const app = express()
  app.get('/private', expressAuth(options), (req, res) => {
    res.json((req as unknown as { auth: AccessTokenClaims }).auth)
  })
  const listener = app.listen(0, '127.0.0.1')
  t.after(() => listener.close())
  await new Promise((resolve) => listener.once('listening', resolve))
  const { port } = listener.address() as AddressInfo
  await probe(async (authorization) => {
    const res = await fetch(`http://127.0.0.1:${port}/private`, {
      headers: authorization ? { authorization } : {},
    })
    return { status: res.status, body: await res.json() }
  })
})

test("honoAuth: middleware that sets c.get('auth')", async () => {
  const app = new Hono<{ Variables: { auth: AccessTokenClaims } }>()
  app.use('/private', honoAuth(options))
  app.get('/private', (c) => c.json(c.get('auth')))
  await probe(async (authorization) => {
    const res = await app.request('/private', { headers: authorization ? { authorization } : {} })
    return { status: res.status, body: await res.json() }
  })
})
