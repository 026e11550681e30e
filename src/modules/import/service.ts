// POST users/import (CONTRACT §14): up to 1,000 users a request, each with a hash made by
// another system (lib/foreign-hashes.ts) or none, created in one transaction with one
// INSERT and one audit write, so a large import runs at thousands of users a second. A
// row's problem (a field outside its rule, a hash refused) is that row's result; the others
// go on. Only the request's own shape is a 400.
import type { Deps } from '../../deps.ts'
import { displayEmail, normalizeEmail } from '../../lib/email.ts'
import { AppError } from '../../lib/errors.ts'
import { importHash } from '../../lib/foreign-hashes.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { Actor, AuditEntry } from '../audit/recorder.ts'
import { addUserRoles, findRolesByName, type Role } from '../roles/members.ts'
import { isAdminRole, MEMBER_ROLE, type Permission } from '../roles/permissions.ts'
import { refuseEscalation } from '../roles/service.ts'
import { credentialGuard } from '../users/credentials.ts'
import { findLiveByEmails, type NewUser } from '../users/reads.ts'
import { insertImportedUsers, updateImportedUser } from '../users/writes.ts'
import { type CheckedUser, checkRow } from './rows.ts'
import type { ImportBody, ImportResult } from './schemas.ts'
import { signerKeySeal } from './signer-key.ts'

type ImportDeps = Pick<Deps, 'db' | 'audit' | 'clock' | 'cipher' | 'sessions'>

const PROFILE = ['displayName', 'givenName', 'familyName', 'externalId'] as const

export async function importUsers(
  deps: ImportDeps,
  tenantId: string,
  body: ImportBody,
  actor: Actor,
  baseRoleAuthority: boolean,
  permissions: readonly Permission[],
): Promise<{ results: ImportResult[] }> {
  const onConflict = body.onConflict ?? 'skip'
  const firebase = body.hashConfig?.firebase
  const results: ImportResult[] = body.users.map((_, index) => ({ index, status: 'skipped' }))
  const seen = new Set<string>()
  const rows: { index: number; email: string; input: CheckedUser }[] = []
  body.users.forEach((row, index) => {
    const checked = checkRow(row)
    if ('reason' in checked) {
      // Left out of `seen`: a later valid row with the same address is not its duplicate.
      results[index] = { index, status: 'error', reason: checked.reason }
      return
    }
    const user = checked.user
    const email = normalizeEmail(user.email)
    if (seen.has(email)) results[index] = { index, status: 'skipped', reason: 'duplicate_in_batch' }
    else if (user.role !== undefined && isAdminRole(user.role) && actor.type === 'apiKey') {
      // As PATCH users: a leaked key must not mint Admins (CONTRACT §4).
      results[index] = { index, status: 'error', reason: 'api_key_not_allowed' }
    } else if (user.role !== undefined && isAdminRole(user.role) && !baseRoleAuthority) {
      // Making an Admin is an Admin's act (CONTRACT §17).
      results[index] = { index, status: 'error', reason: 'permission_required' }
    } else rows.push({ index, email, input: user })
    seen.add(email)
  })
  // A `revoking` transaction: a password replaced by an update ends the user's sessions as
  // a password change does (CONTRACT §4's 5 s rule), once it committed.
  await deps.sessions.revoking(async (tx, revoke) => {
    // The custom roles the rows name (CONTRACT §17), read once for the batch; a row naming
    // one the tenant has not is that row's error.
    const named = [...new Set(rows.flatMap((r) => r.input.roles ?? []))]
    const known = new Map(
      (await findRolesByName(tx, tenantId, named))
        .filter((r) => r.kind === 'tenant')
        .map((r) => [r.nameNormalized, r]),
    )
    const rolesOf = (input: CheckedUser) => [
      ...new Map(
        (input.roles ?? []).map((name) => {
          const role = known.get(name.toLowerCase())
          return [role?.id, role] as const
        }),
      ).values(),
    ]
    const mayGrant = (tx2: typeof tx, roles: Role[]) =>
      roles.length === 0
        ? Promise.resolve(true)
        : refuseEscalation(tx2, tenantId, { actor, permissions }, roles).then(
            () => true,
            (error) => {
              if (error instanceof AppError && error.reason === 'permission_required') return false
              throw error
            },
          )
    const granted = new Map<number, Role[]>()
    for (let i = rows.length - 1; i >= 0; i--) {
      const { index, input } = rows[i]
      const roles = rolesOf(input)
      if (roles.some((r) => r === undefined)) {
        results[index] = { index, status: 'error', reason: 'validation' }
        rows.splice(i, 1)
      } else if (!(await mayGrant(tx, roles as Role[]))) {
        // Granting by import is granting (CONTRACT §17): no role the importer does not hold.
        results[index] = { index, status: 'error', reason: 'permission_required' }
        rows.splice(i, 1)
      } else granted.set(index, roles as Role[])
    }
    const grant = async (index: number, userId: string, email: string) => {
      const roles = granted.get(index) ?? []
      const gained = new Set(
        await addUserRoles(
          tx,
          tenantId,
          userId,
          roles.map((r) => r.id),
          now,
        ),
      )
      const added = roles
        .filter((r) => gained.has(r.id))
        .map((r) => r.name)
        .sort()
      if (added.length > 0) {
        entries.push({
          action: 'UserRolesChanged',
          userId,
          email,
          metadata: { added, removed: [], via: 'import' },
        })
      }
    }
    const existing = await findLiveByEmails(
      tx,
      tenantId,
      rows.map((r) => r.email),
    )
    // The credential guard (users/credentials.ts), for every caller: an import update never
    // replaces the password of an Admin or of a user with a second factor.
    const guard = await credentialGuard(tx, tenantId, [...existing.values()])
    const now = deps.clock.now()
    const inserts: NewUser[] = []
    const insertIndex = new Map<string, number>()
    const entries: AuditEntry[] = []
    for (const { index, email, input } of rows) {
      const found = existing.get(email)
      if (found && onConflict === 'skip') {
        results[index] = { index, status: 'skipped', id: found.id, reason: 'exists' }
        continue
      }
      if (found && input.passwordHash !== undefined && guard(found, 'password') !== undefined) {
        results[index] = { index, status: 'error', id: found.id, reason: 'credential_protected' }
        continue
      }
      const id = found?.id ?? uuidv7(now.getTime())
      let passwordHash: string | undefined
      if (input.passwordHash !== undefined) {
        const made = importHash(
          { passwordHash: input.passwordHash, passwordSalt: input.passwordSalt },
          firebase,
          () => signerKeySeal(deps.cipher, tenantId, id),
        )
        if ('refused' in made) {
          results[index] = { index, status: 'error', reason: made.refused }
          continue
        }
        passwordHash = made.stored
      }
      const profile = Object.fromEntries(
        PROFILE.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]),
      )
      if (found) {
        // Role and status stay as they are: PATCH users changes them under the last-Admin rule.
        await updateImportedUser(tx, tenantId, found.id, {
          ...(passwordHash !== undefined ? { passwordHash } : {}),
          ...(input.emailVerified !== undefined ? { emailVerified: input.emailVerified } : {}),
          ...profile,
          updatedAt: now,
        })
        if (passwordHash !== undefined) {
          await revoke(tenantId, found.id, actor, 'password-changed')
        }
        results[index] = { index, status: 'updated', id: found.id }
        entries.push(imported(found.id, email, 'updated', passwordHash))
        await grant(index, found.id, email)
        continue
      }
      const createdAt = input.createdAt ? new Date(input.createdAt) : now
      inserts.push({
        tenantId,
        id,
        email: displayEmail(input.email),
        emailNormalized: email,
        passwordHash: passwordHash ?? null,
        status: input.status ?? 'Active',
        role: input.role ?? MEMBER_ROLE,
        emailVerified: input.emailVerified ?? false,
        createdAt,
        updatedAt: now,
        ...profile,
      })
      insertIndex.set(email, index)
    }
    if (inserts.length > 0) {
      // A concurrent sign-up of the same address wins: its row is then skipped here.
      const createdByEmail = await insertImportedUsers(tx, tenantId, now, inserts)
      for (const row of inserts) {
        const index = insertIndex.get(row.emailNormalized) as number
        const id = createdByEmail.get(row.emailNormalized)
        if (id === undefined) {
          results[index] = { index, status: 'skipped', reason: 'exists' }
          continue
        }
        results[index] = { index, status: 'created', id }
        entries.push(imported(id, row.emailNormalized, 'created', row.passwordHash ?? undefined))
        await grant(index, id, row.emailNormalized)
      }
    }
    await deps.audit.record(tx, tenantId, actor, entries)
  })
  return { results }
}

function imported(
  userId: string,
  email: string,
  outcome: 'created' | 'updated',
  passwordHash: string | undefined,
): AuditEntry {
  // The kind of hash, never the hash: `$2b`, `pbkdf2_sha256`, `$firebase-scrypt`…
  const hashType = passwordHash?.split('$', passwordHash.startsWith('$') ? 2 : 1).join('$')
  return {
    action: 'UserImported',
    userId,
    email,
    metadata: { outcome, ...(hashType ? { hashType } : {}) },
  }
}
