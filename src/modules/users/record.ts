// The user record of CONTRACT §2 and §14, defined once. Each field names its response
// schema and the column it comes from; from this table follow the `User` component (so the
// token envelope, /me, the users list, PATCH users and the personal-data export all answer
// it), the column list of the raw statements (users/queries.ts) and presentUser for a row
// read through Drizzle. A field is added here and nowhere else.
//
// src/schemas.ts registers the component, so this file imports nothing from there (an
// import cycle); the two enums live here and src/schemas.ts re-exports them.
import { type Static, type TSchema, Type } from 'typebox'
import { users } from '../../db/schema.ts'
import { ROLE_NAMES_SQL } from '../roles/members.ts'
import { BASE_ROLES } from '../roles/permissions.ts'

type UserRow = typeof users.$inferSelect

export const UserStatus = Type.Union([
  Type.Literal('Pending'),
  Type.Literal('Active'),
  Type.Literal('Suspended'),
])
export const Role = Type.Union(BASE_ROLES.map((role) => Type.Literal(role)))

// src/schemas.ts's DateTime and NullableDateTime, written again: see the import note above.
const Time = Type.String({ format: 'date-time' })
const NullableTime = Type.Union([Time, Type.Null()])
const Profile = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

/** A field of the record: its schema and the Drizzle row key (the column) it is read from. */
interface Field {
  schema: TSchema
  from: keyof UserRow
  /** A time shown only while it is in the future, else null (lockedUntil). */
  whileFuture?: boolean
}
const field = <S extends TSchema>(schema: S, from: keyof UserRow) => ({ schema, from })

const FIELDS = {
  id: field(Type.String(), 'id'),
  tenantId: field(Type.String(), 'tenantId'),
  email: field(Type.String(), 'email'),
  status: field(UserStatus, 'status'),
  role: field(Role, 'role'),
  createdAt: field(Time, 'createdAt'),
  lastLoginAt: field(NullableTime, 'lastLoginAt'),
  // CONTRACT §21: the stored end of the account's failure lock only while it holds.
  lockedUntil: {
    ...field(
      Type.Union([Time, Type.Null()], {
        description:
          "When the account's sign-in failure lock ends (CONTRACT §6, §21); null unless locked now.",
      }),
      'lockedUntil',
    ),
    whileFuture: true,
  },
  totpEnrolled: field(Type.Boolean(), 'totpEnabled'),
  emailVerified: field(Type.Boolean(), 'emailVerified'),
  displayName: field(Profile('The name to show; null when unknown.'), 'displayName'),
  givenName: field(Profile('The given (first) name; null when unknown.'), 'givenName'),
  familyName: field(Profile('The family (last) name; null when unknown.'), 'familyName'),
  externalId: field(
    Profile("The provisioning client's own id for the user (SCIM externalId); null when unset."),
    'externalId',
  ),
  locale: field(
    Type.Union([Type.String(), Type.Null()], {
      description:
        'The language of the pages and mails for the user (a supported BCP 47 locale, CONTRACT §20); null when unset.',
    }),
    'locale',
  ),
} satisfies Record<string, Field>

type Schemas = { [K in keyof typeof FIELDS]: (typeof FIELDS)[K]['schema'] }
const schemas = Object.fromEntries(
  Object.entries(FIELDS).map(([name, f]) => [name, f.schema]),
) as Schemas

/**
 * The custom roles (CONTRACT §17) the user holds, by name, sorted; not a column of users:
 * the raw statements read it with the row (ROLE_NAMES_SQL), presentUser takes it from its
 * caller (default []).
 */
const RolesField = Type.Array(Type.String(), {
  description: 'The custom roles the user holds (directly or through a group), sorted.',
})

/** The user as every response shows it (CONTRACT §2, §14, §17). */
export const UserComponent = Type.Object(
  { ...schemas, roles: RolesField },
  {
    $id: 'User',
    description: 'A user of the tenant.',
  },
)
export type UserRecord = Static<typeof UserComponent>

const ENTRIES = Object.entries(FIELDS) as [keyof typeof FIELDS, Field][]

/**
 * The SELECT list of the record for raw statements: each column aliased to its field's name,
 * so a row read with it is the record itself. Times are written by PostgreSQL in
 * Date.prototype.toISOString's form (UTC, milliseconds, truncated as a Date truncates
 * microseconds): parsing each into a Date and writing it back took a tenth of the users
 * list's CPU (issue 10). The aliases differ from the columns, so ORDER BY created_at still
 * means the column (and its index).
 */
const RECORD_VALUES: [name: string, sql: string][] = ENTRIES.map(([name, f]) => {
  const column = users[f.from].name
  const shown = f.whileFuture ? `CASE WHEN ${column} > now() THEN ${column} END` : column
  const value =
    users[f.from].dataType === 'date'
      ? `to_char(${shown} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
      : shown
  return [name, value]
})
RECORD_VALUES.push(['roles', ROLE_NAMES_SQL])

export const RECORD_COLUMNS = RECORD_VALUES.map(([name, value]) => `${value} AS "${name}"`).join(
  ', ',
)

/**
 * The record as one JSON object (`json_build_object`, the same names and values as
 * RECORD_COLUMNS), with `extra` pairs of name and SQL after it: a statement that reads one
 * user on a hot path (GET /me) gets one column back instead of seventeen, whose
 * description the driver parsed again on every execution (a sixth of what the route
 * allocated, issue 37). Read with `recordFromRow` once parsed (the driver parses json).
 */
export function recordJson(extra: [name: string, sql: string][] = []): string {
  const pairs = [...RECORD_VALUES, ...extra].map(([name, value]) => `'${name}', ${value}`)
  return `json_build_object(${pairs.join(', ')})`
}

/** A row read with RECORD_COLUMNS, as the record (the aliases made it one already). */
export function recordFromRow(row: Record<string, unknown>): UserRecord {
  return row as UserRecord
}

/** A user row read through Drizzle, as the record (never the row itself as a response). */
export function presentUser(user: UserRow, roles: string[] = []): UserRecord {
  const record: Record<string, unknown> = { roles }
  for (const [name, f] of ENTRIES) {
    const value = user[f.from]
    if (f.whileFuture && value instanceof Date && value.getTime() <= Date.now()) record[name] = null
    else record[name] = value instanceof Date ? value.toISOString() : value
  }
  return record as UserRecord
}
