// A tenant's branding on its mails (CONTRACT §20: "applied to every hosted page and mail"):
// a bar of the primary colour above the mail and the privacy, terms and support links below
// it, in the mail's language; the text part gains the same links as lines. Applied by the
// mailer's resolver (resolve.ts) to every mail of a tenant, its own template or not.
import { type Translate, translator } from '../../i18n/index.ts'
import type { Mail } from '../../lib/mailer.ts'
import type { Branding } from '../tenants/branding.ts'

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

interface Link {
  label: string
  href: string
  /** The text part's line. */
  line: string
}

function links(branding: Branding, t: Translate): Link[] {
  const out: Link[] = []
  const page = (label: string, href: string) => out.push({ label, href, line: `${label}: ${href}` })
  if (branding.privacyPolicyUrl) page(t('layout.privacy'), branding.privacyPolicyUrl)
  if (branding.termsUrl) page(t('layout.terms'), branding.termsUrl)
  if (branding.supportEmail) {
    const label = t('layout.support', { email: branding.supportEmail })
    out.push({ label, href: `mailto:${branding.supportEmail}`, line: label })
  }
  return out
}

/** The mail with the tenant's colour and links. */
export function brandMail(mail: Mail, branding: Branding, locale: string): Mail {
  const t = translator(locale)
  const found = links(branding, t)
  const bar = `<div style="height:4px;background:${branding.primaryColor}"></div>`
  const footer =
    found.length === 0
      ? ''
      : `<p style="font-size:12px;color:#555">${found
          .map(
            (l) =>
              `<a href="${escapeHtml(l.href)}" style="color:${branding.primaryColor}">${escapeHtml(l.label)}</a>`,
          )
          .join(' · ')}</p>`
  const body = /<body[^>]*>/i.exec(mail.html)
  const html = body
    ? mail.html.slice(0, body.index + body[0].length) +
      bar +
      mail.html.slice(body.index + body[0].length).replace(/<\/body>/i, `${footer}</body>`)
    : `${bar}${mail.html}${footer}`
  const text =
    found.length === 0
      ? mail.text
      : `${mail.text.trimEnd()}\n\n${found.map((l) => l.line).join('\n')}\n`
  return { ...mail, html, text }
}
