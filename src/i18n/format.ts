// Dates and a browser's name in a page's or mail's language (CONTRACT §20: "dates and
// numbers use Intl for the locale"). Times are shown in UTC, said so: the reader's zone is
// not known to a page drawn on the server.
import { userAgentFamily } from '../lib/user-agent.ts'
import type { Translate } from './index.ts'

const dateFormats = new Map<string, Intl.DateTimeFormat>()

function format(locale: string, withTime: boolean): Intl.DateTimeFormat {
  const id = `${locale}:${withTime}`
  let found = dateFormats.get(id)
  if (!found) {
    found = new Intl.DateTimeFormat(locale, {
      dateStyle: 'medium',
      ...(withTime ? { timeStyle: 'short' } : {}),
      timeZone: 'UTC',
    })
    dateFormats.set(id, found)
  }
  return found
}

/** A day (an ISO timestamp or a Date) in `locale`: "3 Dec 2026", "2026/12/03". */
export function localDate(locale: string, value: string | Date): string {
  return format(locale, false).format(new Date(value))
}

/** A day and time in `locale`, in UTC (the caller says "UTC" in its sentence). */
export function localDateTime(locale: string, value: string | Date): string {
  return format(locale, true).format(new Date(value))
}

/** "Firefox on Windows", in the words of `t` (the families' names are the same everywhere). */
export function browserName(t: Translate, userAgent: string | null | undefined): string {
  const { browser, os } = userAgentFamily(userAgent)
  if (browser === 'Other') return os === 'Other' ? t('ua.unknown') : t('ua.someBrowserOn', { os })
  return os === 'Other' ? browser : t('ua.browserOn', { browser, os })
}
