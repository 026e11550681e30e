// Mail templates (CONTRACT §20): a tenant's own subject, text and HTML for a kind of mail in
// one language, checked (placeholders), sanitized (HTML), stored and audited in one
// transaction; reset to the default; previewed with sample values. The mailer uses them
// through resolve.ts.
import type { Deps } from '../../deps.ts'
import { supportedLocales } from '../../i18n/index.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { DEFAULT_MAILS, type SampleContext, sampleValues } from './defaults.ts'
import { KIND_PLACEHOLDERS, MAIL_KINDS, type MailKind } from './kinds.ts'
import * as store from './queries.ts'
import {
  placeholdersIn,
  type Rendered,
  renderTemplate,
  sanitize,
  type TemplateParts,
  templateIssues,
} from './render.ts'
import type { PreviewBody, TemplateBody, TemplateRecord } from './schemas.ts'

type TemplateDeps = Pick<Deps, 'audit' | 'clock' | 'db' | 'config'>

export function presentTemplate(row: store.EmailTemplate): TemplateRecord {
  return {
    kind: row.kind,
    locale: row.locale,
    subject: row.subject,
    text: row.text,
    html: row.html,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export async function listEmailTemplates(deps: Pick<Deps, 'db'>, tenantId: string) {
  const rows = await store.listTemplates(deps.db, tenantId)
  return {
    items: rows.map(presentTemplate),
    kinds: MAIL_KINDS.map((kind) => ({
      kind,
      required: [...KIND_PLACEHOLDERS[kind].required],
      allowed: [...KIND_PLACEHOLDERS[kind].allowed],
      hasDefault: DEFAULT_MAILS[kind] !== undefined,
    })),
    locales: [...supportedLocales],
  }
}

/**
 * The template as it would be stored: its placeholders checked, its HTML sanitized and
 * checked again (a required placeholder only inside a removed element is gone). 400
 * `validation` naming every problem; nothing is written.
 */
function checked(kind: MailKind, body: TemplateParts): TemplateParts {
  const issues = templateIssues(kind, body)
  const html = body.html == null ? null : sanitize(body.html)
  if (issues.length === 0 && html !== null) {
    const kept = placeholdersIn(html)
    for (const need of KIND_PLACEHOLDERS[kind].required) {
      if (!kept.includes(need)) {
        issues.push({
          path: 'body.html',
          message: `must contain {{${need}}} outside what sanitising removes (${kind})`,
        })
      }
    }
  }
  if (issues.length > 0) fail('validation', { details: { issues } })
  return { subject: body.subject, text: body.text, html }
}

export async function putEmailTemplate(
  deps: TemplateDeps,
  tenantId: string,
  kind: MailKind,
  locale: string,
  body: TemplateBody,
  actor: Actor,
) {
  const parts = checked(kind, body)
  const now = deps.clock.now()
  const row = await deps.db.transaction(async (tx) => {
    const saved = await store.upsertTemplate(tx, {
      tenantId,
      kind,
      locale,
      subject: parts.subject,
      text: parts.text,
      html: parts.html ?? null,
      createdAt: now,
      updatedAt: now,
    })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'EmailTemplateUpdated',
        metadata: {
          kind,
          locale,
          change: 'saved',
          sanitized: body.html !== undefined && parts.html !== body.html,
        },
      },
    ])
    return saved
  })
  return { template: presentTemplate(row) }
}

export async function deleteEmailTemplate(
  deps: TemplateDeps,
  tenantId: string,
  kind: MailKind,
  locale: string,
  actor: Actor,
) {
  await deps.db.transaction(async (tx) => {
    const deleted = await store.deleteTemplate(tx, tenantId, kind, locale)
    if (!deleted) fail('not_found', { message: 'This mail has no template: it is the default.' })
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'EmailTemplateUpdated', metadata: { kind, locale, change: 'reset' } },
    ])
  })
}

/**
 * The mail rendered with sample values: the draft when one is sent, else the saved
 * template, else the default mail of the kind.
 */
export async function previewEmailTemplate(
  deps: TemplateDeps,
  tenant: Tenant,
  kind: MailKind,
  locale: string,
  draft: PreviewBody | undefined,
): Promise<Rendered> {
  const ctx: SampleContext = { ...deps, tenant: { ...tenant, locales: null }, locale }
  const values = sampleValues(kind, ctx)
  const sent =
    draft && (draft.subject !== undefined || draft.text !== undefined || draft.html !== undefined)
  if (sent) {
    if (draft.subject === undefined || draft.text === undefined) {
      const missing = draft.subject === undefined ? 'subject' : 'text'
      fail('validation', {
        details: { issues: [{ path: `body.${missing}`, message: 'is required in a draft' }] },
      })
    }
    const parts = checked(kind, { subject: draft.subject, text: draft.text, html: draft.html })
    return renderTemplate(kind, parts, values)
  }
  const saved = await store.findTemplate(deps.db, tenant.id, kind, locale)
  if (saved) return renderTemplate(kind, saved, values)
  const builder = DEFAULT_MAILS[kind]
  if (!builder) fail('not_found', { message: 'This kind has no default mail to preview yet.' })
  const { subject, text, html } = builder(ctx)
  return { subject, text, html }
}
