// The one call a mail builder makes so that a tenant's template can replace its wording
// (CONTRACT §20, Mail templates; docs/ARCHITECTURE.md, src/modules/templates). The builder
// words the mail from the catalogues as before and names its kind, its locale and the
// values of its placeholders; the mailer, in its background send, reads the tenant's
// template for (kind, locale), by its key, and when there is one sends that instead
// (resolve.ts). So no request waits for the read, and without a template nothing changes.
import type { Mail } from '../../lib/mailer.ts'
import type { MailKind, TemplateValues } from './kinds.ts'

export interface TemplateChoice {
  tenantId: string
  kind: MailKind
  /** The locale the mail is worded in (a supported one: i18n/mail.ts). */
  locale: string
  values: TemplateValues
}

/** The mail, marked so that the tenant's template for its kind and locale replaces it. */
export function withTenantTemplate(mail: Mail, choice: TemplateChoice): Mail {
  return { ...mail, template: { ...choice, values: { ...choice.values } } }
}
