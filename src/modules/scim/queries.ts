// The reads of SCIM's Users list (RFC 7644 §3.4.2): the tenant's live users matching the
// filter's clauses, in creation order, a window of them by startIndex/count and how many
// match in all. Each clause becomes a bound comparison; no text of the filter reaches SQL.
// (Writes go through the users module, its queries file being the table's one writer.)
import type { Db } from '../../db/client.ts'
import { and, asc, eq, isNull, ne, type SQL, sql } from '../../db/orm.ts'
import { users } from '../../db/schema.ts'
import { normalizeEmail } from '../../lib/email.ts'
import type { User } from '../users/reads.ts'
import type { Clause } from './filter.ts'

function condition(clause: Clause): SQL {
  switch (clause.attribute) {
    case 'userName':
    case 'emails.value':
      // userName and emails.value are not case-exact (RFC 7643 §4.1): the normalised
      // address, as sign-in compares it (CONTRACT §4).
      return eq(users.emailNormalized, normalizeEmail(clause.value))
    case 'externalId':
      // externalId is case-exact (RFC 7643 §3.1); users_tenant_external_id serves it.
      return eq(users.externalId, clause.value)
    case 'active':
      return clause.value ? ne(users.status, 'Suspended') : eq(users.status, 'Suspended')
  }
}

export async function findScimUsers(
  db: Db,
  tenantId: string,
  clauses: Clause[],
  window: { offset: number; limit: number },
): Promise<{ total: number; users: User[] }> {
  const where = and(
    eq(users.tenantId, tenantId),
    isNull(users.deletedAt),
    ...clauses.map(condition),
  )
  const count = async () => {
    const [{ total }] = await db
      .select({ total: sql<number>`count(*)::int` })
      .from(users)
      .where(where)
    return total
  }
  if (window.limit === 0) return { total: await count(), users: [] }
  const rows = await db
    .select()
    .from(users)
    .where(where)
    .orderBy(asc(users.createdAt), asc(users.id))
    .limit(window.limit)
    .offset(window.offset)
  // A page that is not full, and not past the end, is the last one: its rows give the
  // total without counting (a lookup by userName or externalId is one round trip).
  if (rows.length > 0 && rows.length < window.limit) {
    return { total: window.offset + rows.length, users: rows }
  }
  return { total: await count(), users: rows }
}
