// A cheap fingerprint of everything some tenants own, so the fuzz suite can check, around
// every refused request, that it changed nothing: one query hashes the rows of each
// tenant-owned table (found in the catalogue, so tables added later are covered too).
import { sql } from '../../src/db/orm.ts'
import type { Deps } from '../../src/deps.ts'

// Left out, each on purpose:
// - audit_events: failed sign-ins and refused invites are audited by design (CONTRACT §2).
// - tables of rate-limit or failure-count state, should one appear: refused attempts count
//   by design (CONTRACT §6).
// - api_keys.last_used_at: a key's use is recorded even when the request is then refused,
//   and the write is batched on a timer, so it lands at any moment.
// - one_time_codes.attempts and closed_*: a wrong guess counts against an emailed code, and
//   the fifth burns it, refused or not (SPEC, Login code). A new code is still a change.
const SKIP_TABLE = /^audit_events$|rate|limit|throttle|budget|failure|attempt/
const SKIP_COLUMNS: Record<string, string[]> = {
  api_keys: ['last_used_at'],
  one_time_codes: ['attempts', 'closed_at', 'closed_reason'],
}

export class Snapshots {
  private readonly db: Deps['db']
  private query: string | undefined

  constructor(db: Deps['db']) {
    this.db = db
  }

  /** One text per table: the table name and an md5 of its rows for these tenants. */
  async take(tenantIds: string[]): Promise<Record<string, string>> {
    this.query ??= await this.build()
    const ids = `'{${tenantIds.join(',')}}'::uuid[]`
    const result = (await this.db.execute(
      sql.raw(this.query.replaceAll('$IDS', ids)),
    )) as unknown as {
      rows: { name: string; digest: string }[]
    }
    return Object.fromEntries(result.rows.map((r) => [r.name, r.digest]))
  }

  private async build(): Promise<string> {
    const result = (await this.db.execute(sql`
      SELECT DISTINCT table_name FROM information_schema.columns
      WHERE table_schema = 'public' AND column_name = 'tenant_id'
      ORDER BY table_name`)) as unknown as { rows: { table_name: string }[] }
    const tables = result.rows.map((r) => r.table_name).filter((t) => !SKIP_TABLE.test(t))
    const parts = [digest('tenants', 'id')]
    for (const table of tables) parts.push(digest(table, 'tenant_id'))
    return parts.join('\nUNION ALL\n')
  }
}

function digest(table: string, column: string): string {
  const minus = (SKIP_COLUMNS[table] ?? []).map((c) => ` - '${c}'`).join('')
  return `SELECT '${table}' AS name, md5(coalesce(string_agg(r, E'\\n' ORDER BY r), '')) AS digest
    FROM (SELECT (to_jsonb(t)${minus})::text AS r FROM "${table}" t WHERE t.${column} = ANY($IDS)) x`
}
