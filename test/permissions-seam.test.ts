// The permission seam (CONTRACT §17, issue 29): authorization is by tenant permission, never
// by role name. Only src/modules/roles/permissions.ts names the built-in roles; every admin
// route names the permission it needs, and one that names none cannot start.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import Fastify from 'fastify'
import type { Deps } from '../src/deps.ts'
import { AppError } from '../src/lib/errors.ts'
import { PERMISSION_NAMES } from '../src/modules/roles/permissions.ts'
import { authorize, installAuthentication } from '../src/plugins/auth.ts'
import { startTestServer } from './helpers.ts'

const root = join(import.meta.dirname, '..')
const CATALOGUE = join('src', 'modules', 'roles', 'permissions.ts')

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (/\.[cm]?[jt]s$/.test(entry.name)) yield path
  }
}

/**
 * A built-in role's name as a string literal: a comparison (`=== 'Admin'`,
 * `eq(users.role, 'Admin')`), a default or a type alike. Backticks are left out: the route
 * descriptions write the role as Markdown code inside their text. Tests beside the code
 * assert answers (`assert.equal(res.body.role, 'Admin')`) and are not the service's
 * decisions.
 */
const ROLE_LITERAL = /(['"])(Admin|Member)\1/

test('no file of src/ but the catalogue names a built-in role', () => {
  const files = [...walk(join(root, 'src'))]
    .map((path) => relative(root, path))
    .filter((file) => !file.endsWith('.test.ts'))
  assert.ok(files.includes(CATALOGUE), 'the catalogue is found (the walk is not vacuous)')
  assert.ok(
    ROLE_LITERAL.test(readFileSync(join(root, CATALOGUE), 'utf8')),
    'the pattern finds the catalogue’s own definitions',
  )
  const offenders = files
    .filter((file) => file !== CATALOGUE)
    .flatMap((file) =>
      readFileSync(join(root, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
        .filter(({ line }) => ROLE_LITERAL.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    )
  assert.deepEqual(offenders, [], 'ask src/modules/roles/permissions.ts instead')
})

test('the pattern catches the comparisons it is for', () => {
  for (const line of [
    "if (user.role !== 'Admin') throw",
    'role === "Member"',
    ".where(eq(users.role, 'Admin'))",
  ]) {
    assert.ok(ROLE_LITERAL.test(line), line)
  }
  for (const line of ["'The last active Admin cannot be deleted'", 'isAdminRole(user.role)']) {
    assert.ok(!ROLE_LITERAL.test(line), line)
  }
})

function bareApp() {
  const app = Fastify()
  app.decorateRequest('tenant', null as never)
  // Only the registration check runs here: no request is sent, so no dependency is used.
  installAuthentication(app, {} as unknown as Deps)
  return app
}

test('an admin route that names no permission fails the start', async () => {
  for (const auth of ['admin', 'adminUser'] as const) {
    const app = bareApp()
    await assert.rejects(async () => {
      app.get('/v1/:tenantSlug/unguarded', { config: { auth } }, async () => ({}))
      await app.ready()
    }, /GET \/v1\/:tenantSlug\/unguarded: an admin route must name a tenant permission/)
    await app.close()
  }
})

test('an admin route that names a permission outside the catalogue fails the start', async () => {
  const app = bareApp()
  await assert.rejects(async () => {
    app.get(
      '/v1/:tenantSlug/unguarded',
      // A name the type refuses too; a plain JavaScript caller could still send it.
      { config: { auth: 'admin', permission: 'users:delete' as 'users:write' } },
      async () => ({}),
    )
    await app.ready()
  }, /must name a tenant permission in config.permission \(CONTRACT §17\), not "users:delete"/)
  await app.close()
})

test('a route that names its permission, or is not an admin route, starts', async () => {
  const app = bareApp()
  app.get('/a', { config: { auth: 'admin', permission: 'users:read' } }, async () => ({}))
  app.get('/b', { config: { auth: 'user' } }, async () => ({}))
  app.get('/c', async () => ({}))
  await app.ready()
  await app.close()
})

test('authorize: the permission, or the :write of a :read, lets in', () => {
  authorize(['users:read'], 'users:read')
  authorize(['users:write'], 'users:read')
  authorize(['audit:read'], 'audit:read')
  authorize(PERMISSION_NAMES, 'apikeys:write')
})

test('authorize: none at all is admin_required, some but not this one permission_required', () => {
  const refusal = (held: string[], needed: (typeof PERMISSION_NAMES)[number]) => {
    try {
      authorize(held as typeof PERMISSION_NAMES, needed)
    } catch (error) {
      assert.ok(error instanceof AppError)
      return { status: error.status, reason: error.reason, details: error.details }
    }
    assert.fail(`${held} let in on ${needed}`)
  }
  assert.deepEqual(refusal([], 'users:read'), {
    status: 403,
    reason: 'admin_required',
    details: {},
  })
  assert.deepEqual(refusal(['users:read'], 'users:write'), {
    status: 403,
    reason: 'permission_required',
    details: { permission: 'users:write' },
  })
  // A :read never stands in for a :write, nor one kind for another.
  assert.deepEqual(
    refusal(['audit:read', 'tenant:read'], 'tenant:write').reason,
    'permission_required',
  )
  assert.deepEqual(refusal(['tenant:write'], 'users:read').details, { permission: 'users:read' })
})

test('every admin operation of the document names a permission of the catalogue', async (ctx) => {
  const server = await startTestServer(ctx)
  const res = await server.request('GET', '/v1/openapi.json')
  assert.equal(res.status, 200)
  const guarded: string[] = []
  for (const [path, item] of Object.entries(res.body.paths as Record<string, any>)) {
    for (const [method, op] of Object.entries(item as Record<string, any>)) {
      const reasons = op.responses?.['403']?.['x-reasons'] ?? []
      const admin = reasons.includes('admin_required')
      assert.equal(admin, 'x-permission' in op, `${method} ${path}: x-permission iff admin`)
      if (!admin) continue
      assert.ok(PERMISSION_NAMES.includes(op['x-permission']), `${method} ${path}`)
      assert.ok(reasons.includes('permission_required'), `${method} ${path} lists it`)
      guarded.push(`${method.toUpperCase()} ${path} ${op['x-permission']}`)
    }
  }
  // The mapping itself (CONTRACT §17): a change to it is a change of this list.
  assert.deepEqual(guarded.sort(), EXPECTED.sort())
})

const EXPECTED = [
  'PUT /v1/{tenantSlug}/oauth/idp/credentials tenant:write',
  'DELETE /v1/{tenantSlug}/oauth/idp/credentials tenant:write',
  'GET /v1/{tenantSlug}/tenant tenant:read',
  'POST /v1/{tenantSlug}/policy/dry-run tenant:read',
  'PATCH /v1/{tenantSlug}/tenant tenant:write',
  'DELETE /v1/{tenantSlug}/tenant tenant:write',
  'PUT /v1/{tenantSlug}/tenant/logo tenant:write',
  'DELETE /v1/{tenantSlug}/tenant/logo tenant:write',
  'GET /v1/{tenantSlug}/users users:read',
  'PATCH /v1/{tenantSlug}/users/{userId} users:write',
  'DELETE /v1/{tenantSlug}/users/{userId} users:write',
  'POST /v1/{tenantSlug}/users/{userId}/totp/disable users:write',
  'POST /v1/{tenantSlug}/users/{userId}/impersonate users:impersonate',
  'POST /v1/{tenantSlug}/users/{userId}/unlock users:write',
  'POST /v1/{tenantSlug}/users/{userId}/erase users:write',
  'POST /v1/{tenantSlug}/users/import users:write',
  'GET /v1/{tenantSlug}/users/{userId}/sessions users:read',
  'DELETE /v1/{tenantSlug}/users/{userId}/sessions/{id} users:write',
  'GET /v1/{tenantSlug}/api-keys apikeys:write',
  'POST /v1/{tenantSlug}/api-keys apikeys:write',
  'DELETE /v1/{tenantSlug}/api-keys/{id} apikeys:write',
  'GET /v1/{tenantSlug}/invites invites:write',
  'POST /v1/{tenantSlug}/invites invites:write',
  'DELETE /v1/{tenantSlug}/invites/{id} invites:write',
  'GET /v1/{tenantSlug}/audit audit:read',
  'GET /v1/{tenantSlug}/audit/export audit:read',
  'GET /v1/{tenantSlug}/groups users:read',
  'POST /v1/{tenantSlug}/applications applications:write',
  'GET /v1/{tenantSlug}/applications applications:write',
  'GET /v1/{tenantSlug}/applications/{id} applications:write',
  'PATCH /v1/{tenantSlug}/applications/{id} applications:write',
  'POST /v1/{tenantSlug}/applications/{id}/secret applications:write',
  'DELETE /v1/{tenantSlug}/applications/{id} applications:write',
  'POST /v1/{tenantSlug}/api-resources applications:write',
  'GET /v1/{tenantSlug}/api-resources applications:write',
  'GET /v1/{tenantSlug}/api-resources/{id} applications:write',
  'PATCH /v1/{tenantSlug}/api-resources/{id} applications:write',
  'DELETE /v1/{tenantSlug}/api-resources/{id} applications:write',
  'POST /v1/{tenantSlug}/sso-connections connections:write',
  'GET /v1/{tenantSlug}/sso-connections connections:write',
  'GET /v1/{tenantSlug}/sso-connections/{id} connections:write',
  'PATCH /v1/{tenantSlug}/sso-connections/{id} connections:write',
  'DELETE /v1/{tenantSlug}/sso-connections/{id} connections:write',
  'POST /v1/{tenantSlug}/social-connections connections:write',
  'GET /v1/{tenantSlug}/social-connections connections:write',
  'GET /v1/{tenantSlug}/social-connections/{id} connections:write',
  'PATCH /v1/{tenantSlug}/social-connections/{id} connections:write',
  'DELETE /v1/{tenantSlug}/social-connections/{id} connections:write',
  'POST /v1/{tenantSlug}/webhooks webhooks:write',
  'GET /v1/{tenantSlug}/webhooks webhooks:write',
  'GET /v1/{tenantSlug}/webhooks/{id} webhooks:write',
  'PATCH /v1/{tenantSlug}/webhooks/{id} webhooks:write',
  'DELETE /v1/{tenantSlug}/webhooks/{id} webhooks:write',
  'POST /v1/{tenantSlug}/webhooks/{id}/secret webhooks:write',
  'GET /v1/{tenantSlug}/webhooks/{id}/deliveries webhooks:write',
  'POST /v1/{tenantSlug}/webhooks/{id}/deliveries/{deliveryId}/retry webhooks:write',
  'POST /v1/{tenantSlug}/webhooks/{id}/test webhooks:write',
  'PUT /v1/{tenantSlug}/groups/{id}/roles roles:write',
  'GET /v1/{tenantSlug}/organizations organizations:write',
  'POST /v1/{tenantSlug}/organizations organizations:write',
  'PATCH /v1/{tenantSlug}/organizations/{id} organizations:write',
  'DELETE /v1/{tenantSlug}/organizations/{id} organizations:write',
  'PUT /v1/{tenantSlug}/organizations/{id}/members/{userId} organizations:write',
  'DELETE /v1/{tenantSlug}/organizations/{id}/members/{userId} organizations:write',
  'POST /v1/{tenantSlug}/organizations/{id}/invitations organizations:write',
  'GET /v1/{tenantSlug}/organizations/{id}/invitations organizations:write',
  'DELETE /v1/{tenantSlug}/organizations/{id}/invitations/{invitationId} organizations:write',
  'POST /v1/{tenantSlug}/hooks hooks:write',
  'GET /v1/{tenantSlug}/hooks hooks:write',
  'GET /v1/{tenantSlug}/hooks/{id} hooks:write',
  'PATCH /v1/{tenantSlug}/hooks/{id} hooks:write',
  'DELETE /v1/{tenantSlug}/hooks/{id} hooks:write',
  'POST /v1/{tenantSlug}/hooks/{id}/test hooks:write',
  'GET /v1/{tenantSlug}/hooks/{id}/calls hooks:write',
  'GET /v1/{tenantSlug}/email-templates tenant:write',
  'PUT /v1/{tenantSlug}/email-templates/{kind}/{locale} tenant:write',
  'DELETE /v1/{tenantSlug}/email-templates/{kind}/{locale} tenant:write',
  'POST /v1/{tenantSlug}/email-templates/{kind}/{locale}/preview tenant:write',
  'GET /v1/{tenantSlug}/roles roles:write',
  'POST /v1/{tenantSlug}/roles roles:write',
  'GET /v1/{tenantSlug}/roles/{id} roles:write',
  'PATCH /v1/{tenantSlug}/roles/{id} roles:write',
  'DELETE /v1/{tenantSlug}/roles/{id} roles:write',
  'PUT /v1/{tenantSlug}/users/{userId}/roles roles:write',
]
