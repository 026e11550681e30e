// The language of a mail (CONTRACT §20): the recipient's `locale`, else the requesting
// page's (the request's Accept-Language: the hosted pages send their own locale with each
// call they make, web/api.ts), else the tenant's `defaultLocale`; always one of the
// tenant's `locales`.
import { negotiate, offeredLocales, type Translate, translator } from './index.ts'

export interface MailTenant {
  locales: string[] | null
  defaultLocale: string
}

export function mailLocale(
  tenant: MailTenant,
  recipient?: string | null,
  requestLanguage?: string | null,
): string {
  return negotiate({
    user: recipient,
    acceptLanguage: requestLanguage ?? undefined,
    tenantDefault: tenant.defaultLocale,
    available: offeredLocales(tenant.locales),
  })
}

/** The translator of a mail, and its locale (for dates through Intl). */
export function mailTranslator(
  tenant: MailTenant,
  recipient?: string | null,
  requestLanguage?: string | null,
): { t: Translate; locale: string } {
  const locale = mailLocale(tenant, recipient, requestLanguage)
  return { t: translator(locale), locale }
}

/** A date and time in the mail's language, in UTC (the reader's zone is unknown). */
export function mailDate(locale: string, date: Date): string {
  const formatted = new Intl.DateTimeFormat(locale, {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'UTC',
  }).format(date)
  return `${formatted} UTC`
}
