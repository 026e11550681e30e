// Each tenant permission guards exactly its routes (CONTRACT §17), over real HTTP: for every
// admin operation of the OpenAPI document that an API key may call, a key holding only the
// route's permission gets past the check, and a key holding every other permission (but not
// the route's, nor the :write that stands for a :read) is refused with 403
// permission_required. Keys are stored with their permissions as POST api-keys stores them.
// The check runs before the body is read (plugins/auth.ts, onRequest), so an empty body and
// unknown ids are enough: what comes after the check (400, 404) is not this test's concern.
// The routes a key may never call (a person's act: API keys, the identity provider's
// credentials, impersonation) are tried the same way with user tokens of Members holding a
// custom role of those permissions.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { test } from 'node:test'
import { apiKeys } from '../src/db/schema.ts'
import { hashToken, randomToken } from '../src/lib/crypto.ts'
import { PERMISSION_NAMES } from '../src/modules/roles/permissions.ts'
import { createTenant, signup, startTestServer } from './helpers.ts'

test('each permission opens exactly its routes: only it gets in, every other one is 403 permission_required', async (ctx) => {
  const server = await startTestServer(ctx)
  const tenant = await createTenant(server)
  const keyWith = async (permissions: string[]) => {
    const plaintext = `ak_live_${randomToken()}`
    await server.deps.db.insert(apiKeys).values({
      tenantId: tenant.tenantId,
      id: randomUUID(),
      name: 'table key',
      environment: 'live',
      prefix: plaintext.slice(0, 12),
      keyHash: hashToken(plaintext),
      permissions: [...permissions].sort(),
      createdAt: new Date(),
      expiresAt: null,
      revokedAt: null,
    })
    return plaintext
  }
  /** A Member's token whose one custom role holds `permissions` (read live at each request). */
  const userWith = async (permissions: string[]) => {
    const admin = { token: tenant.admin.accessToken }
    const made = await server.request(
      'POST',
      `/v1/${tenant.slug}/roles`,
      { name: `table-${randomToken(6)}`, permissions },
      admin,
    )
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const member = await signup(server, tenant.slug)
    const given = await server.request(
      'PUT',
      `/v1/${tenant.slug}/users/${member.user.id}/roles`,
      { roles: [made.body.role.name] },
      admin,
    )
    assert.equal(given.status, 200, JSON.stringify(given.body))
    return member.accessToken as string
  }
  const users = new Map<string, { only: string; others: string }>()
  const doc = (await server.request('GET', '/v1/openapi.json')).body
  const keys = new Map<string, { only: string; others: string }>()
  let checked = 0
  for (const [path, item] of Object.entries(doc.paths as Record<string, any>)) {
    for (const [method, op] of Object.entries(item as Record<string, any>)) {
      const permission = op['x-permission'] as string | undefined
      if (!permission) continue
      const byKey = (op.security as Record<string, unknown>[]).some((s) => 'apiKey' in s)
      // Closing the workspace would end the test's tenant; its own tests hold it.
      if (method === 'delete' && path === '/v1/{tenantSlug}/tenant') continue
      // A :read is also opened by its :write (CONTRACT §17).
      const opening = [permission, permission.replace(/:read$/, ':write')]
      const mint = byKey ? keyWith : userWith
      const cache = byKey ? keys : users
      let pair = cache.get(permission)
      if (!pair) {
        pair = {
          only: await mint([permission]),
          others: await mint(PERMISSION_NAMES.filter((p) => !opening.includes(p))),
        }
        cache.set(permission, pair)
      }
      const url = path
        .replace('{tenantSlug}', tenant.slug)
        .replace(/\{[^}]+\}/g, '018f0000-0000-7000-8000-000000000000')
      // Some answers are no JSON (the audit export's NDJSON): read as text, parsed when JSON.
      const send = async (token: string) => {
        const res = await fetch(`${server.url}${url}`, {
          method: method.toUpperCase(),
          headers: {
            authorization: `Bearer ${token}`,
            ...(method === 'get' ? {} : { 'content-type': 'application/json' }),
          },
          body: method === 'get' ? undefined : '{}',
        })
        const text = await res.text()
        const json = (res.headers.get('content-type') ?? '').includes('application/json')
        return { status: res.status, body: json ? JSON.parse(text) : text }
      }
      const refusedAs = (res: { status: number; body: any }) =>
        res.status === 403 ? res.body?.details?.reason : undefined
      const only = await send(pair.only)
      assert.ok(
        !['permission_required', 'admin_required'].includes(refusedAs(only)),
        `${method.toUpperCase()} ${path}: ${permission} alone gets in (${only.status} ${JSON.stringify(only.body)})`,
      )
      const others = await send(pair.others)
      assert.equal(others.status, 403, `${method.toUpperCase()} ${path}: every other permission`)
      assert.equal(refusedAs(others), 'permission_required', `${method.toUpperCase()} ${path}`)
      assert.equal(others.body.details.permission, permission, `${method.toUpperCase()} ${path}`)
      checked++
    }
  }
  assert.ok(checked >= 50, `${checked} operations checked`)
  console.log(
    `operations checked: ${checked}, by key ${keys.size} and by user ${users.size} permissions`,
  )
})
