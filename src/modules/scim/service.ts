// SCIM Users (CONTRACT §14) on the users module's own services: creation through
// createUser, every change through changeUser (the admin PATCH's rules: the last Admin,
// sessions ended on suspension and on a new password) and deletion through deleteUser, so
// SCIM can do nothing the admin API's rules refuse. Audit: UserProvisioned, UserUpdated and
// UserDeprovisioned, each with metadata.via = "scim".
import type { Handle } from '../../db/client.ts'
import { databaseFailure } from '../../db/errors.ts'
import type { Deps } from '../../deps.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { isUuid } from '../../lib/ids.ts'
import type { Actor } from '../audit/recorder.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { changeUser, deleteUser, type UserChange } from '../users/admin-service.ts'
import { credentialGuard, isMachine } from '../users/credentials.ts'
import { findUserByEmail, findUserById, type User } from '../users/reads.ts'
import { createUser, preparePassword } from '../users/service.ts'
import { notFound, ScimError, uniqueness } from './errors.ts'
import { parseFilter } from './filter.ts'
import { applyPatch } from './patch.ts'
import { findScimUsers } from './queries.ts'
import {
  LIST_SCHEMA,
  primaryEmail,
  readUser,
  toScimUser,
  type UserInput,
  versionOf,
} from './resource.ts'

type ScimDeps = Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'mailer' | 'sessions'>

const VIA = 'scim'
/** ServiceProviderConfig's filter.maxResults: count is clamped to it. */
export const MAX_RESULTS = 200
const DEFAULT_COUNT = 100

export const baseUrl = (deps: Pick<Deps, 'config'>, tenant: Tenant) =>
  `${deps.config.publicUrl}/scim/v2/${tenant.slug}`

export interface ListQuery {
  filter?: string
  startIndex?: string
  count?: string
}

/**
 * The window a list asks for (RFC 7644 §3.4.2.4): startIndex is 1-based, count at most
 * MAX_RESULTS; a startIndex below 1 is read as 1 and a negative count as 0.
 */
export function listWindow(query: ListQuery) {
  const startIndex = Math.max(1, pageInteger(query.startIndex, 'startIndex') ?? 1)
  const count = Math.min(
    MAX_RESULTS,
    Math.max(0, pageInteger(query.count, 'count') ?? DEFAULT_COUNT),
  )
  return { startIndex, window: { offset: startIndex - 1, limit: count } }
}

/** GET Users: RFC 7644 §3.4.2 (filter) and §3.4.2.4 (startIndex is 1-based, count ≥ 0). */
export async function listScimUsers(deps: ScimDeps, tenant: Tenant, query: ListQuery) {
  const clauses = query.filter === undefined ? [] : parseFilter(query.filter)
  const { startIndex, window } = listWindow(query)
  const { total, users } = await findScimUsers(deps.db, tenant.id, clauses, window)
  const base = baseUrl(deps, tenant)
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: users.length,
    Resources: users.map((u) => toScimUser(u, base)),
  }
}

/** A paging parameter (startIndex, count) as an integer; 400 invalidValue when it is none. */
export function pageInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (!/^-?\d{1,15}$/.test(value)) {
    throw new ScimError(400, `${name} must be an integer.`, { scimType: 'invalidValue' })
  }
  // Far past any tenant's users: kept within what OFFSET takes.
  return Math.min(Number(value), 2 ** 31 - 1)
}

/** The live user of the tenant with this id; 404 for any other (another tenant's too). */
export async function getScimUser(deps: ScimDeps, tenant: Tenant, id: string): Promise<User> {
  const user = isUuid(id) ? await findUserById(deps.db, tenant.id, id) : undefined
  if (!user) throw notFound(`No user ${id}.`)
  return user
}

/** POST Users (RFC 7644 §3.3): a new Member, Active unless `active` is false. */
export async function provisionUser(deps: ScimDeps, tenant: Tenant, body: unknown, actor: Actor) {
  const input = readUser(body)
  const passwordHash =
    input.password === undefined
      ? null
      : await preparePassword(input.password, input.email, tenant.name)
  return unique(() =>
    deps.db.transaction(async (tx) => {
      const user = await createUser(
        deps,
        tx,
        tenant,
        {
          email: input.email,
          passwordHash,
          role: MEMBER_ROLE,
          status: input.active === false ? 'Suspended' : 'Active',
          emailVerified: false,
          profile: profileOf(input),
        },
        () => {
          throw taken()
        },
      )
      await deps.audit.record(tx, tenant.id, actor, [
        {
          action: 'UserProvisioned',
          userId: user.id,
          email: user.emailNormalized,
          metadata: { via: VIA, active: user.status !== 'Suspended' },
        },
      ])
      return user
    }),
  )
}

/** PUT Users/{id} (RFC 7644 §3.5.1): the resource replaced by the body. */
export async function replaceUser(
  deps: ScimDeps,
  tenant: Tenant,
  id: string,
  body: unknown,
  actor: Actor,
  ifMatch: string | undefined,
) {
  const input = readUser(body)
  return change(deps, tenant, id, actor, ifMatch, () => input)
}

/**
 * PATCH Users/{id} (RFC 7644 §3.5.2): the operations applied to the current resource, the
 * result read as a PUT body. userName and the primary email are one address: when an
 * operation changed only the email (Entra ID's `emails[type eq "work"].value`), it wins.
 */
export async function patchUser(
  deps: ScimDeps,
  tenant: Tenant,
  id: string,
  body: unknown,
  actor: Actor,
  ifMatch: string | undefined,
) {
  return change(deps, tenant, id, actor, ifMatch, (user) => {
    const current = toScimUser(user, baseUrl(deps, tenant))
    const patched = applyPatch(current as unknown as Record<string, unknown>, body)
    const userName = patched.userName
    const email = primaryEmail(patched.emails)
    if (
      typeof userName === 'string' &&
      normalizeEmail(userName) === user.emailNormalized &&
      email !== undefined &&
      normalizeEmail(email) !== user.emailNormalized
    ) {
      patched.userName = email
    }
    return readUser(patched)
  })
}

/** DELETE Users/{id}: the admin route's soft delete (sessions end, the address is freed). */
export async function deprovisionUser(
  deps: ScimDeps,
  tenant: Tenant,
  id: string,
  actor: Actor,
  ifMatch: string | undefined,
) {
  if (!isUuid(id)) throw notFound(`No user ${id}.`)
  await scimNotFound(() =>
    deleteUser(deps, tenant.id, id, actor, {
      action: 'UserDeprovisioned',
      metadata: { via: VIA },
      check: (user) => checkVersion(user, ifMatch),
    }),
  )
}

async function change(
  deps: ScimDeps,
  tenant: Tenant,
  id: string,
  actor: Actor,
  ifMatch: string | undefined,
  read: (user: User) => UserInput,
): Promise<User> {
  if (!isUuid(id)) throw notFound(`No user ${id}.`)
  let passwordSet = false
  const plan = async (user: User, tx: Handle): Promise<UserChange> => {
    checkVersion(user, ifMatch)
    const input = read(user)
    const emailNormalized = normalizeEmail(input.email)
    // The credential guard (users/credentials.ts): a key never takes over an Admin, nor
    // sets a password over a second factor.
    const guard = await credentialGuard(tx, tenant.id, [user])
    const refusal =
      (emailNormalized !== user.emailNormalized ? guard(user, 'email') : undefined) ??
      (input.password !== undefined ? guard(user, 'password') : undefined)
    if (refusal !== undefined && isMachine(actor))
      fail('credential_protected', { message: refusal })
    if (emailNormalized !== user.emailNormalized) {
      const holder = await findUserByEmail(tx, tenant.id, emailNormalized)
      if (holder && holder.id !== user.id) throw taken()
    }
    const patch: UserChange = { ...profileOf(input), email: input.email }
    // active: true does not make a Pending user (address not yet proven) Active.
    if (input.active === false) patch.status = 'Suspended'
    else if (input.active === true && user.status === 'Suspended') patch.status = 'Active'
    if (input.password !== undefined) {
      patch.passwordHash = await preparePassword(input.password, input.email, tenant.name)
      passwordSet = true
    }
    return patch
  }
  const user = await unique(() =>
    scimNotFound(() => changeUser(deps, tenant.id, id, actor, plan, { via: VIA })),
  )
  // CONTRACT §9: a changed password is told to its user, once the change committed. The
  // directory's address and client are not the user's to see.
  if (passwordSet) {
    sendSecurityAlert(deps, tenant, user, {
      event: 'password_changed',
      notes: [{ key: 'mail.alert.note.scimPassword' }],
    })
  }
  return user
}

/**
 * If-Match (RFC 7644 §3.14, RFC 9110 §13.1.1): `*` or a list of tags, one of which must be
 * the resource's version (compared weakly, as SCIM's tags are weak); else 412.
 */
function checkVersion(user: User, ifMatch: string | undefined) {
  if (ifMatch === undefined) return
  const tags = ifMatch.split(',').map((t) => t.trim())
  if (tags.includes('*')) return
  const current = weak(versionOf(user))
  if (!tags.some((t) => weak(t) === current)) {
    throw new ScimError(412, 'The resource has changed since that version (If-Match).')
  }
}

const weak = (tag: string) => tag.replace(/^W\//, '')

function profileOf(input: UserInput) {
  const { displayName, givenName, familyName, externalId } = input
  // readUser answered a supported locale (resource.ts `language`).
  const locale = input.locale as UserChange['locale']
  return { displayName, givenName, familyName, externalId, locale }
}

function taken() {
  return uniqueness('Another user of this tenant has this userName (email address).')
}

/** A race past the check: the unique index on live addresses answers (SQLSTATE 23505). */
async function unique<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (databaseFailure(error)?.code === '23505') throw taken()
    throw error
  }
}

/** The users module's 404 in SCIM's words. */
async function scimNotFound<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof AppError && error.reason === 'not_found') throw notFound()
    throw error
  }
}
