// API resources (CONTRACT §11): the tenant's APIs, named by an absolute URI (RFC 8707),
// with the scopes tokens for them may carry and those tokens' lifetime. Admin or API key;
// each change audited in its transaction; an identifier is unique in the tenant (409
// identifier_taken).
import type { Handle } from '../../db/client.ts'
import { databaseFailure } from '../../db/errors.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import type { Actor } from '../audit/recorder.ts'
import { findRolesByName, lockTenantRoles } from '../roles/members.ts'
import { BASE_ROLES, isBuiltInRoleName } from '../roles/permissions.ts'
import * as store from './queries.ts'
import type { ApiResourceRecord, CreateApiResourceBody, PatchApiResourceBody } from './schemas.ts'

type ResourceDeps = Pick<Deps, 'audit' | 'clock' | 'db'>
type ScopeInput = CreateApiResourceBody['scopes'][number]

const DEFAULT_ROLES: readonly string[] = BASE_ROLES
const DEFAULT_TTL = 900

export function presentApiResource(row: store.ApiResource): ApiResourceRecord {
  return {
    id: row.id,
    name: row.name,
    identifier: row.identifier,
    scopes: row.scopes.map((s) => ({
      name: s.name,
      description: s.description,
      roles: s.roles,
    })),
    accessTokenTtlSeconds: row.accessTokenTtlSeconds,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** RFC 8707 §2: an absolute URI without a fragment. */
function checkIdentifier(identifier: string): void {
  let problem: string | undefined
  try {
    new URL(identifier)
    if (identifier.includes('#')) problem = 'must not have a fragment'
  } catch {
    problem = 'must be an absolute URI'
  }
  if (problem) {
    throw new AppError('validation', {
      details: { issues: [{ path: 'body.identifier', message: problem }] },
    })
  }
}

function normalizeScopes(scopes: ScopeInput[]) {
  const seen = new Set<string>()
  for (const [i, scope] of scopes.entries()) {
    if (seen.has(scope.name)) {
      throw new AppError('validation', {
        details: { issues: [{ path: `body.scopes.${i}.name`, message: 'is listed twice' }] },
      })
    }
    seen.add(scope.name)
  }
  return scopes.map((s) => ({
    name: s.name,
    description: s.description ?? null,
    roles: s.roles ?? [...DEFAULT_ROLES],
  }))
}

/**
 * CONTRACT §17: a scope's `roles` name the built-ins or the tenant's custom roles (any case;
 * stored as the role's own name); an unknown one, or an organization role, is 400
 * `validation` naming it. Read in the transaction that stores them.
 */
async function resolveScopeRoles(
  db: Handle,
  tenantId: string,
  scopes: ReturnType<typeof normalizeScopes>,
) {
  const names = scopes.flatMap((s) => s.roles).filter((r) => !isBuiltInRoleName(r))
  // Serialised with the role changes (a rename or delete rewrites the scopes naming the
  // role): a role deleted meanwhile is never stored by name, to be inherited by a later
  // role of that name.
  if (names.length > 0) await lockTenantRoles(db, tenantId)
  const found = await findRolesByName(db, tenantId, [...new Set(names)])
  const byName = new Map(found.filter((r) => r.kind === 'tenant').map((r) => [r.nameNormalized, r]))
  return scopes.map((scope, i) => ({
    ...scope,
    roles: [
      ...new Set(
        scope.roles.map((name, j) => {
          const base = BASE_ROLES.find((b) => b.toLowerCase() === name.toLowerCase())
          const role = base ?? byName.get(name.toLowerCase())?.name
          if (!role) {
            throw new AppError('validation', {
              details: {
                issues: [{ path: `body.scopes.${i}.roles.${j}`, message: `unknown role ${name}` }],
              },
            })
          }
          return role
        }),
      ),
    ],
  }))
}

const isUniqueViolation = (error: unknown) => databaseFailure(error)?.code === '23505'

export async function createApiResource(
  deps: ResourceDeps,
  tenantId: string,
  input: CreateApiResourceBody,
  actor: Actor,
) {
  checkIdentifier(input.identifier)
  const normalized = normalizeScopes(input.scopes)
  const now = deps.clock.now()
  const row = await deps.db.transaction(async (tx) => {
    const scopes = await resolveScopeRoles(tx, tenantId, normalized)
    const created = await store.insertApiResource(tx, {
      tenantId,
      id: uuidv7(now.getTime()),
      name: input.name,
      identifier: input.identifier,
      scopes,
      accessTokenTtlSeconds: input.accessTokenTtlSeconds ?? DEFAULT_TTL,
      createdAt: now,
      updatedAt: now,
    })
    if (!created) fail('identifier_taken')
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApiResourceCreated',
        metadata: { apiResourceId: created.id, identifier: created.identifier, name: created.name },
      },
    ])
    return created
  })
  return { apiResource: presentApiResource(row) }
}

export async function listApiResourcePage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  query: PageQuery,
) {
  return readPage(
    query,
    ({ limit, after }) => store.listApiResources(deps.db, tenantId, { limit, after }),
    presentApiResource,
  )
}

export async function getApiResource(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findApiResource(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return { apiResource: presentApiResource(row) }
}

export async function updateApiResource(
  deps: ResourceDeps,
  tenantId: string,
  id: string,
  input: PatchApiResourceBody,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  if (input.identifier !== undefined) checkIdentifier(input.identifier)
  const normalized = input.scopes === undefined ? undefined : normalizeScopes(input.scopes)
  const fields = Object.keys(input).filter(
    (key) => input[key as keyof PatchApiResourceBody] !== undefined,
  )
  try {
    return await deps.db.transaction(async (tx) => {
      const current = await store.findApiResource(tx, tenantId, id)
      if (!current) fail('not_found')
      const scopes = normalized && (await resolveScopeRoles(tx, tenantId, normalized))
      const changes = Object.fromEntries(
        Object.entries({ ...input, scopes }).filter(([, value]) => value !== undefined),
      )
      if (fields.length === 0) return { apiResource: presentApiResource(current) }
      const row = await store.updateApiResource(tx, tenantId, id, {
        ...changes,
        updatedAt: deps.clock.now(),
      })
      if (row === 'taken') fail('identifier_taken')
      if (!row) fail('not_found')
      await deps.audit.record(tx, tenantId, actor, [
        {
          action: 'ApiResourceUpdated',
          metadata: { apiResourceId: id, identifier: row.identifier, changes: fields },
        },
      ])
      return { apiResource: presentApiResource(row) }
    })
  } catch (error) {
    // Two renames to one identifier at once: the unique index refuses the second.
    if (isUniqueViolation(error)) fail('identifier_taken')
    throw error
  }
}

export async function deleteApiResource(
  deps: ResourceDeps,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const row = await store.deleteApiResource(tx, tenantId, id)
    if (!row) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApiResourceDeleted',
        metadata: { apiResourceId: id, identifier: row.identifier, name: row.name },
      },
    ])
  })
}

/** The resource a resource indicator (RFC 8707) names, or undefined: its scopes and their roles. */
export function apiResourceByIdentifier(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  identifier: string,
): Promise<store.ApiResource | undefined> {
  return store.findApiResourceByIdentifier(deps.db, tenantId, identifier)
}

/** The tenant's first `limit` API resources, oldest first (the words for their scopes). */
export function firstApiResources(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  limit: number,
): Promise<store.ApiResource[]> {
  return store.listApiResources(deps.db, tenantId, { limit })
}
