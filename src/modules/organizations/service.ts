// Organizations inside a tenant (CONTRACT §18): the organizations, their members and the
// organization roles (§17 roles of kind `organization`, one template every organization
// shares) each member holds there. Each change is one transaction that writes its audit
// rows (each with metadata.organizationId). Who may read: a caller holding
// organizations:write, or a member of that organization; anyone else gets 404, so an
// organization's existence is not told to a stranger.
import type { Handle } from '../../db/client.ts'
import { databaseFailure } from '../../db/errors.ts'
import type { Deps } from '../../deps.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { detachOrganization } from '../federation/detach.ts'
import { normalizeDomain } from '../federation/domains.ts'
import { findRolesByIds, findRolesByName, type Role } from '../roles/members.ts'
import type { Permission } from '../roles/permissions.ts'
import { type Caller, refuseEscalation } from '../roles/service.ts'
import { findUserById } from '../users/reads.ts'
import * as store from './queries.ts'
import {
  type CreateOrganizationBody,
  MAX_ORGANIZATIONS,
  type MemberRecord,
  type OrganizationRecord,
  type PatchOrganizationBody,
} from './schemas.ts'

type OrgDeps = Pick<Deps, 'audit' | 'clock' | 'db'>

/** Who asks: its actor, its tenant permissions, and (a user) its id. */
export interface Reader {
  actor: Actor
  permissions: readonly Permission[]
}

const MANAGE: Permission = 'organizations:write'

const manages = (reader: Reader) => reader.permissions.includes(MANAGE)

const invalid = (path: string, message: string): never => {
  throw new AppError('validation', { message, details: { issues: [{ path, message }] } })
}

const domainTaken = (domain?: string) =>
  new AppError('domain_taken', {
    message: domain
      ? `Another organization of this workspace already claims ${domain}.`
      : 'Another organization of this workspace already claims one of these domains.',
  })

async function uniqueDomains<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (databaseFailure(error)?.code === '23505') throw domainTaken()
    throw error
  }
}

/**
 * The organization roles named (any case), sorted by name, each once; 400 validation at
 * `path.i` for the first name that is no organization role of the tenant.
 */
export async function resolveOrganizationRoles(
  db: Handle,
  tenantId: string,
  names: readonly string[],
  path: string,
  caller: Caller,
): Promise<Role[]> {
  const found = await findRolesByName(db, tenantId, [...names])
  const byName = new Map(
    found.filter((r) => r.kind === 'organization').map((r) => [r.nameNormalized, r]),
  )
  const unknown = names.findIndex((name) => !byName.has(name.toLowerCase()))
  if (unknown >= 0) invalid(`${path}.${unknown}`, `${names[unknown]} is no organization role`)
  const roles = [...byName.values()].sort((a, b) =>
    a.nameNormalized.localeCompare(b.nameNormalized),
  )
  // No escalation (CONTRACT §17): an organization token carries its roles' resource scopes,
  // so a caller gives only roles whose every scope it holds itself.
  await refuseEscalation(db, tenantId, caller, roles)
  return roles
}

function checkDomains(domains: readonly string[]): string[] {
  const out = new Set<string>()
  for (const [i, raw] of domains.entries()) {
    const domain = normalizeDomain(raw)
    if (!domain) invalid(`body.jit.emailDomains.${i}`, `${raw.slice(0, 60)} is no email domain`)
    else out.add(domain)
  }
  return [...out].sort()
}

/** The JIT roles that still exist (a deleted role's id is dropped when read), by name. */
async function jitRoleNames(db: Handle, tenantId: string, ids: string[]) {
  const found = await findRolesByIds(db, tenantId, ids)
  return found
    .filter((r) => r.kind === 'organization')
    .map((r) => r.name)
    .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()))
}

async function present(
  db: Handle,
  tenantId: string,
  organization: store.Organization,
): Promise<OrganizationRecord> {
  const domains = await store.domainsOf(db, tenantId, [organization.id])
  const counts = await store.memberCounts(db, tenantId, [organization.id])
  return {
    id: organization.id,
    name: organization.name,
    description: organization.description,
    mfaRequired: organization.mfaRequired,
    jit: {
      emailDomains: domains.get(organization.id) ?? [],
      roles: await jitRoleNames(db, tenantId, organization.jitRoleIds),
    },
    memberCount: counts.get(organization.id) ?? 0,
    createdAt: organization.createdAt.toISOString(),
    updatedAt: organization.updatedAt.toISOString(),
  }
}

export async function listOrganizationPage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  query: { limit: number; cursor?: string },
) {
  const page = await readPage(
    query,
    ({ limit, after }) => store.organizationPage(deps.db, tenantId, { limit, after }),
    (o) => o,
  )
  const ids = page.items.map((o) => o.id)
  const domains = await store.domainsOf(deps.db, tenantId, ids)
  const counts = await store.memberCounts(deps.db, tenantId, ids)
  const roleIds = [...new Set(page.items.flatMap((o) => o.jitRoleIds))]
  const roles = new Map(
    (await findRolesByIds(deps.db, tenantId, roleIds))
      .filter((r) => r.kind === 'organization')
      .map((r) => [r.id, r.name]),
  )
  return {
    items: page.items.map(
      (o): OrganizationRecord => ({
        id: o.id,
        name: o.name,
        description: o.description,
        mfaRequired: o.mfaRequired,
        jit: {
          emailDomains: domains.get(o.id) ?? [],
          roles: o.jitRoleIds
            .map((id) => roles.get(id))
            .filter((n): n is string => n !== undefined)
            .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())),
        },
        memberCount: counts.get(o.id) ?? 0,
        createdAt: o.createdAt.toISOString(),
        updatedAt: o.updatedAt.toISOString(),
      }),
    ),
    nextCursor: page.nextCursor,
  }
}

export async function createOrganization(
  deps: OrgDeps,
  tenantId: string,
  input: CreateOrganizationBody,
  actor: Actor,
  permissions: readonly Permission[],
): Promise<OrganizationRecord> {
  const name = input.name.trim()
  if (name.length === 0) invalid('body.name', 'name must not be blank')
  const domains = checkDomains(input.jit?.emailDomains ?? [])
  const now = deps.clock.now()
  return uniqueDomains(() =>
    deps.db.transaction(async (tx) => {
      const jitRoles = await resolveOrganizationRoles(
        tx,
        tenantId,
        input.jit?.roles ?? [],
        'body.jit.roles',
        { actor, permissions },
      )
      await store.lockTenantOrganizations(tx, tenantId)
      if ((await store.countOrganizations(tx, tenantId)) >= MAX_ORGANIZATIONS) {
        fail('limit_exceeded', {
          message: `A workspace has at most ${MAX_ORGANIZATIONS} organizations.`,
        })
      }
      const organization = await store.insertOrganization(tx, {
        tenantId,
        id: uuidv7(now.getTime()),
        name,
        description: input.description ?? null,
        mfaRequired: input.mfaRequired ?? false,
        jitRoleIds: jitRoles.map((r) => r.id),
        createdAt: now,
        updatedAt: now,
      })
      await store.replaceDomains(tx, tenantId, organization.id, domains)
      await deps.audit.record(tx, tenantId, actor, [
        {
          action: 'OrganizationCreated',
          metadata: { organizationId: organization.id, name },
        },
      ])
      return present(tx, tenantId, organization)
    }),
  )
}

/** Reads an organization for a reader: 404 unless it manages organizations or is a member. */
export async function readOrganization(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  id: string,
  reader: Reader,
): Promise<OrganizationRecord> {
  const organization = await visible(deps.db, tenantId, id, reader)
  return present(deps.db, tenantId, organization)
}

async function visible(db: Handle, tenantId: string, id: string, reader: Reader) {
  if (!isUuid(id)) fail('not_found')
  const organization = await store.findOrganization(db, tenantId, id)
  if (!organization) fail('not_found')
  if (manages(reader)) return organization as store.Organization
  const userId = reader.actor.type === 'user' ? reader.actor.id : null
  if (!userId || !(await store.findMember(db, tenantId, id, userId))) fail('not_found')
  return organization as store.Organization
}

export async function updateOrganization(
  deps: OrgDeps,
  tenantId: string,
  id: string,
  input: PatchOrganizationBody,
  actor: Actor,
  permissions: readonly Permission[],
): Promise<OrganizationRecord> {
  if (!isUuid(id)) fail('not_found')
  const name = input.name?.trim()
  if (name !== undefined && name.length === 0) invalid('body.name', 'name must not be blank')
  const domains = input.jit ? checkDomains(input.jit.emailDomains) : undefined
  const now = deps.clock.now()
  return uniqueDomains(() =>
    deps.db.transaction(async (tx) => {
      const locked = await store.lockOrganization(tx, tenantId, id)
      if (!locked) fail('not_found')
      const jitRoles = input.jit
        ? await resolveOrganizationRoles(tx, tenantId, input.jit.roles, 'body.jit.roles', {
            actor,
            permissions,
          })
        : undefined
      const fields = Object.keys(input).sort()
      const changes: Partial<store.NewOrganization> = { updatedAt: now }
      if (name !== undefined) changes.name = name
      if (input.description !== undefined) changes.description = input.description
      if (input.mfaRequired !== undefined) changes.mfaRequired = input.mfaRequired
      if (jitRoles) changes.jitRoleIds = jitRoles.map((r) => r.id)
      const organization = await store.updateOrganization(tx, tenantId, id, changes)
      if (!organization) fail('not_found')
      if (domains) await store.replaceDomains(tx, tenantId, id, domains)
      await deps.audit.record(tx, tenantId, actor, [
        {
          action: 'OrganizationUpdated',
          metadata: { organizationId: id, name: organization?.name ?? locked?.name ?? '', fields },
        },
      ])
      return present(tx, tenantId, organization as store.Organization)
    }),
  )
}

/** Deletes an organization: its memberships, roles, domains and invitations go with it. */
export async function deleteOrganization(
  deps: OrgDeps,
  tenantId: string,
  id: string,
  actor: Actor,
): Promise<void> {
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const locked = await store.lockOrganization(tx, tenantId, id)
    if (!locked) fail('not_found')
    // The SSO connections whose sign-ins joined it go on signing in, joining none (CONTRACT
    // §18; the row lock above keeps any from naming it meanwhile), said in the audit row.
    const ssoConnections = await detachOrganization(tx, tenantId, id, deps.clock.now())
    await store.deleteOrganization(tx, tenantId, id)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'OrganizationDeleted',
        metadata: {
          organizationId: id,
          name: locked?.name ?? '',
          ...(ssoConnections.length ? { ssoConnections } : {}),
        },
      },
    ])
  })
}

export async function listMemberPage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  id: string,
  query: { limit: number; cursor?: string },
  reader: Reader,
) {
  await visible(deps.db, tenantId, id, reader)
  const after = query.cursor === undefined ? undefined : query.cursor
  const page = await readPage(
    { limit: query.limit, cursor: after },
    async (window) =>
      (await store.memberPage(deps.db, tenantId, id, window)).map((m) => ({ ...m, id: m.userId })),
    (m) => m,
  )
  const roles = await store.memberRoles(
    deps.db,
    tenantId,
    id,
    page.items.map((m) => m.userId),
  )
  return {
    items: page.items.map(
      (m): MemberRecord => ({
        userId: m.userId,
        email: m.email,
        roles: roles.get(m.userId) ?? [],
        joinedAt: m.joinedAt.toISOString(),
      }),
    ),
    nextCursor: page.nextCursor,
  }
}

export type JoinVia = 'admin' | 'invite' | 'jit' | 'sso'

/**
 * Makes the user a member with `roles` (a member already: sets its roles to them). Answers
 * the audit entries: OrganizationMemberAdded, or OrganizationMemberRolesChanged when the
 * roles of an existing member changed. Runs inside the caller's transaction.
 */
export async function joinOrganization(
  tx: Handle,
  tenantId: string,
  organizationId: string,
  user: { id: string; emailNormalized: string },
  roles: Role[],
  via: JoinVia,
  now: Date,
  mode: 'set' | 'add' = 'set',
): Promise<AuditEntry[]> {
  const added = await store.insertMember(tx, tenantId, organizationId, user.id, now)
  const before = added ? [] : await store.memberRoleRows(tx, tenantId, organizationId, user.id)
  const wanted =
    mode === 'add' ? [...new Map([...before, ...roles].map((r) => [r.id, r])).values()] : roles
  await store.replaceMemberRoles(
    tx,
    tenantId,
    organizationId,
    user.id,
    wanted.map((r) => r.id),
  )
  const names = wanted.map((r) => r.name).sort()
  if (added) {
    return [
      {
        action: 'OrganizationMemberAdded',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { organizationId, roles: names, via },
      },
    ]
  }
  const had = before.map((r) => r.name)
  const gained = names.filter((n) => !had.includes(n)).sort()
  const lost = had.filter((n) => !names.includes(n)).sort()
  if (gained.length + lost.length === 0) return []
  return [
    {
      action: 'OrganizationMemberRolesChanged',
      userId: user.id,
      email: user.emailNormalized,
      metadata: { organizationId, added: gained, removed: lost, via },
    },
  ]
}

/** PUT organizations/{id}/members/{userId}: adds the user, or sets a member's roles. */
export async function putMember(
  deps: OrgDeps,
  tenantId: string,
  id: string,
  userId: string,
  roleNames: string[],
  actor: Actor,
  permissions: readonly Permission[],
): Promise<MemberRecord> {
  if (!isUuid(id) || !isUuid(userId)) fail('not_found')
  const now = deps.clock.now()
  return deps.db.transaction(async (tx) => {
    const organization = await store.lockOrganization(tx, tenantId, id)
    if (!organization) fail('not_found')
    const user = await findUserById(tx, tenantId, userId)
    if (!user) fail('not_found', { message: 'No such user in this workspace.' })
    const roles = await resolveOrganizationRoles(tx, tenantId, roleNames, 'body.roles', {
      actor,
      permissions,
    })
    const entries = await joinOrganization(
      tx,
      tenantId,
      id,
      user as { id: string; emailNormalized: string },
      roles,
      'admin',
      now,
    )
    await deps.audit.record(tx, tenantId, actor, entries)
    const member = await store.findMember(tx, tenantId, id, userId)
    if (!member) fail('not_found')
    const held = await store.memberRoles(tx, tenantId, id, [userId])
    return {
      userId,
      email: (member as store.MemberRow).email,
      roles: held.get(userId) ?? [],
      joinedAt: (member as store.MemberRow).joinedAt.toISOString(),
    }
  })
}

/** DELETE organizations/{id}/members/{userId}: 404 when the user is no member. */
export async function removeMember(
  deps: OrgDeps,
  tenantId: string,
  id: string,
  userId: string,
  actor: Actor,
): Promise<void> {
  if (!isUuid(id) || !isUuid(userId)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const organization = await store.lockOrganization(tx, tenantId, id)
    if (!organization) fail('not_found')
    const member = await store.findMember(tx, tenantId, id, userId)
    if (!member) fail('not_found', { message: 'The user is no member of this organization.' })
    await store.deleteMember(tx, tenantId, id, userId)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'OrganizationMemberRemoved',
        userId,
        email: (member as store.MemberRow).email.toLowerCase(),
        metadata: { organizationId: id, via: 'admin' },
      },
    ])
  })
}

/** GET me/organizations: the caller's memberships, by organization name. */
export async function myOrganizations(deps: Pick<Deps, 'db'>, tenantId: string, userId: string) {
  return { items: await store.membershipsOf(deps.db, tenantId, userId) }
}
