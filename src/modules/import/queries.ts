// The import's one INSERT for a whole batch, as a raw named statement over unnested arrays:
// the query builder's 1,000-row INSERT (14,000 parameters) took most of a batch's time.
import type { Handle } from '../../db/client.ts'
import { and, eq, inArray, isNull } from '../../db/orm.ts'
import { namedStatement } from '../../db/prepared.ts'
import { users } from '../../db/schema.ts'
import type { NewUser } from '../users/queries.ts'

const insertBatch = namedStatement(
  'users_import_batch',
  `INSERT INTO users
     (tenant_id, id, email, email_normalized, password_hash, status, role, email_verified,
      created_at, updated_at, display_name, given_name, family_name, external_id)
   SELECT $1, u.id, u.email, u.email_normalized, u.password_hash, u.status, u.role,
     u.email_verified, u.created_at, $2, u.display_name, u.given_name, u.family_name,
     u.external_id
   FROM unnest($3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
     $9::boolean[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[])
     AS u(id, email, email_normalized, password_hash, status, role, email_verified,
       created_at, display_name, given_name, family_name, external_id)
   ON CONFLICT DO NOTHING
   RETURNING id, email_normalized`,
)

/**
 * Inserts the users of one tenant; a row whose address is taken meanwhile is left out.
 * Answers the ids created, by normalised address.
 */
export async function insertImportedUsers(
  tx: Handle,
  tenantId: string,
  now: Date,
  rows: NewUser[],
): Promise<Map<string, string>> {
  const column = <K extends keyof NewUser>(key: K) => rows.map((r) => r[key] ?? null)
  const created = await insertBatch(tx, [
    tenantId,
    now,
    column('id'),
    column('email'),
    column('emailNormalized'),
    column('passwordHash'),
    column('status'),
    column('role'),
    column('emailVerified'),
    column('createdAt'),
    column('displayName'),
    column('givenName'),
    column('familyName'),
    column('externalId'),
  ])
  return new Map(created.map((r) => [r.email_normalized as string, r.id as string]))
}

/** The tenant's live users with these addresses, locked until the batch commits. */
export async function findLiveByEmails(
  tx: Handle,
  tenantId: string,
  emails: string[],
): Promise<Map<string, { id: string; emailNormalized: string }>> {
  if (emails.length === 0) return new Map()
  const rows = await tx
    .select({ id: users.id, emailNormalized: users.emailNormalized })
    .from(users)
    .where(
      and(
        eq(users.tenantId, tenantId),
        inArray(users.emailNormalized, emails),
        isNull(users.deletedAt),
      ),
    )
    .for('update')
  return new Map(rows.map((r) => [r.emailNormalized, r]))
}

/** onConflict update: the fields an import may change on an existing user. */
export async function updateImportedUser(
  tx: Handle,
  tenantId: string,
  userId: string,
  changes: Pick<
    Partial<NewUser>,
    | 'passwordHash'
    | 'emailVerified'
    | 'displayName'
    | 'givenName'
    | 'familyName'
    | 'externalId'
    | 'updatedAt'
  >,
): Promise<void> {
  await tx
    .update(users)
    .set(changes)
    .where(and(eq(users.tenantId, tenantId), eq(users.id, userId)))
}
