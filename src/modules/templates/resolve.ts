// The mailer's template resolver (CONTRACT §20), given to the mailer by app.ts: for a mail
// marked by seam.ts, the tenant's template of its kind and locale (one read by the primary
// key, in the mailer's background send), rendered with the mail's values; without one, the
// mail as its builder worded it. Either way with the tenant's branding (brand.ts), if any.
import type { Handle } from '../../db/client.ts'
import type { TemplateResolver } from '../../lib/mailer.ts'
import { tenantBranding } from '../tenants/service.ts'
import { brandMail } from './brand.ts'
import { MAIL_KINDS, type MailKind } from './kinds.ts'
import { findTemplate } from './queries.ts'
import { renderTemplate } from './render.ts'

const isKind = (kind: string): kind is MailKind => (MAIL_KINDS as readonly string[]).includes(kind)

export function templateResolver(db: Handle): TemplateResolver {
  return async (mail) => {
    const { tenantId, kind, locale, values } = mail.template
    if (!isKind(kind)) return mail
    const [row, branding] = await Promise.all([
      findTemplate(db, tenantId, kind, locale),
      tenantBranding(db, tenantId),
    ])
    const worded = row ? { ...mail, ...renderTemplate(kind, row, values) } : mail
    return branding ? brandMail(worded, branding, locale) : worded
  }
}
