// The queries of the email_templates table (CONTRACT §20); no other file touches it.
import type { Handle } from '../../db/client.ts'
import { and, asc, eq } from '../../db/orm.ts'
import { emailTemplates } from '../../db/schema.ts'

export type EmailTemplate = typeof emailTemplates.$inferSelect
export type NewEmailTemplate = typeof emailTemplates.$inferInsert

const key = (tenantId: string, kind: string, locale: string) =>
  and(
    eq(emailTemplates.tenantId, tenantId),
    eq(emailTemplates.kind, kind),
    eq(emailTemplates.locale, locale),
  )

/** The tenant's template of one kind in one locale: the primary key's lookup. */
export async function findTemplate(
  db: Handle,
  tenantId: string,
  kind: string,
  locale: string,
): Promise<EmailTemplate | undefined> {
  const rows = await db
    .select()
    .from(emailTemplates)
    .where(key(tenantId, kind, locale))
    .limit(1)
  return rows[0]
}

/** Every template of the tenant, by kind then locale (at most kinds × locales rows). */
export function listTemplates(db: Handle, tenantId: string): Promise<EmailTemplate[]> {
  return db
    .select()
    .from(emailTemplates)
    .where(eq(emailTemplates.tenantId, tenantId))
    .orderBy(asc(emailTemplates.kind), asc(emailTemplates.locale))
}

/** Creates or replaces the template of (kind, locale); answers the row and whether it was new. */
export async function upsertTemplate(db: Handle, row: NewEmailTemplate): Promise<EmailTemplate> {
  const rows = await db
    .insert(emailTemplates)
    .values(row)
    .onConflictDoUpdate({
      target: [emailTemplates.tenantId, emailTemplates.kind, emailTemplates.locale],
      set: { subject: row.subject, text: row.text, html: row.html, updatedAt: row.updatedAt },
    })
    .returning()
  return rows[0] as EmailTemplate
}

export async function deleteTemplate(
  db: Handle,
  tenantId: string,
  kind: string,
  locale: string,
): Promise<EmailTemplate | undefined> {
  const rows = await db
    .delete(emailTemplates)
    .where(key(tenantId, kind, locale))
    .returning()
  return rows[0]
}
