// The words of the Mail templates page (CONTRACT §20): what each kind of mail is for, and
// the default wording turned into a template to start from. The API lists the tenant's own
// templates but not the default ones: it previews the default mail, filled with sample
// values. So the page asks two previews, a draft naming each placeholder on a line of its
// own (which answers each sample value) and the default mail, and puts each placeholder
// back where its sample value stands.
import type { Schemas } from './api.ts'

export type Rendered = Schemas['EmailPreview']

/** What the page edits: `html` empty is no HTML part of its own (drawn from the text). */
export interface Draft {
  subject: string
  text: string
  html: string
}

interface KindWords {
  label: string
  does: string
  /** What the default mail holds that no placeholder fills (shown with a prefilled default). */
  beyond?: string
}

export const KIND_WORDS: Record<string, KindWords> = {
  login_code: {
    label: 'Sign-in code',
    does: 'The code a person asks for to sign in without a password.',
  },
  email_otp: {
    label: 'Second-factor code',
    does: 'The code mailed as the second step of a sign-in, for accounts whose second factor is email.',
  },
  email_verification: {
    label: 'Address verification',
    does: 'The code that proves a person receives mail at the address of their account.',
  },
  password_reset: {
    label: 'Password reset',
    does: 'The code that lets a person who forgot their password choose a new one.',
  },
  invitation: {
    label: 'Workspace invitation',
    does: 'The link an invited person opens to join the workspace.',
    beyond:
      'The default also shows the invitation’s token, the date it ends and how a program accepts it: no placeholder fills those, so they stand here with sample values. Replace them: {{link}} opens the invitation, {{expiresInMinutes}} says how long it works.',
  },
  organization_invitation: {
    label: 'Organization invitation',
    does: 'The link an invited person opens to join one of the workspace’s organizations.',
    beyond:
      'The default also names the organization and shows the invitation’s token, the date it ends and how a program accepts it: no placeholder fills those, so they stand here with sample values. Replace them: {{link}} opens the invitation, {{expiresInMinutes}} says how long it works.',
  },
  magic_link: {
    label: 'Sign-in link',
    does: 'The link that signs a person in without a password, in the browser that asked for it (opened elsewhere, it shows the code to type there), when the workspace sends links.',
  },
  security_alert: {
    label: 'Security alert',
    does: 'Tells a person that something changed on their account (a sign-in from a new device, a new password, a second factor added or removed), when security alerts are on in Settings. Its subject always starts with “Security alert: ”, which mail filters rely on.',
    beyond:
      'The default also says when it happened and from which address and browser: no placeholder fills those, so they stand here with sample values. Replace them: {{event}} says what happened.',
  },
}

export const kindLabel = (kind: string) => KIND_WORDS[kind]?.label ?? kind

/** A draft that names each placeholder on a line of its own: its preview answers their values. */
export function probeDraft(allowed: readonly string[]) {
  return { subject: 'Sample values', text: allowed.map((name) => `{{${name}}}`).join('\n') }
}

/** Each placeholder's sample value, read from the preview of `probeDraft`. */
export function samplesOf(allowed: readonly string[], probe: Rendered): Map<string, string> {
  const lines = probe.text.split('\n')
  // A value on more than one line would shift the others: then none is trusted.
  if (lines.length !== allowed.length) return new Map()
  return new Map(allowed.map((name, i) => [name, lines[i] ?? '']))
}

const numeric = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const named = (v: string) =>
  v.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? '&#39;',
  )
const escapeRegExp = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const WORD = /[A-Za-z0-9]/

/**
 * `part` with each sample value (as it stands in it: raw, or HTML-escaped in the HTML)
 * replaced by its placeholder, in one pass, longest value first so that a link is not
 * broken by a shorter value inside it. A value starting or ending with a letter or digit is
 * matched whole only ("10" minutes, not the 10 of "10px").
 */
function unfill(part: string, samples: Map<string, string>, html: boolean): string {
  const forms = new Map<string, string>()
  for (const [name, value] of samples) {
    if (value.trim() === '') continue
    for (const form of html ? [value, numeric(value), named(value)] : [value]) {
      if (!forms.has(form)) forms.set(form, name)
    }
  }
  if (forms.size === 0) return part
  const pattern = [...forms.keys()]
    .sort((a, b) => b.length - a.length)
    .map((form) => {
      const before = WORD.test(form.charAt(0)) ? '(?<![A-Za-z0-9])' : ''
      const after = WORD.test(form.charAt(form.length - 1)) ? '(?![A-Za-z0-9])' : ''
      return `${before}${escapeRegExp(form)}${after}`
    })
    .join('|')
  return part.replace(new RegExp(pattern, 'g'), (found) => `{{${forms.get(found)}}}`)
}

/** The body of a whole HTML document (a stored template holds no html or body element). */
const bodyOf = (html: string) => /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html

/** The default mail as a template: its sample values turned back into placeholders. */
export function templateOf(mail: Rendered, samples: Map<string, string>): Draft {
  return {
    subject: unfill(mail.subject, samples, false),
    text: unfill(mail.text, samples, false),
    html: unfill(bodyOf(mail.html), samples, true).trim(),
  }
}

/**
 * A rendered HTML part made ready for the preview frame. The frame's document inherits the
 * console's CSP (style-src 'self', img-src 'self' data:), which refuses every style
 * attribute the mail has and every image from elsewhere, each with an error: so each
 * `style` is renamed `data-mail-style` (applied by the page through the CSSOM, which CSP
 * does not govern, see MailPreview) and an image's `src` is renamed `data-mail-src` (not
 * loaded). This reads tags as the service writes them (sanitize-html and its own mail
 * builders: lowercase names, values in double quotes with `"` escaped, `<` and `>` escaped
 * in text and values), where every `<…>` is a tag and ` style="` inside one starts an
 * attribute; anything else is left as it is, and the CSP refuses it.
 */
export function framed(html: string): string {
  return html.replace(/<[a-zA-Z][^<>]*>/g, (tag) => {
    const styled = tag.replace(/(\s)style="/g, '$1data-mail-style="')
    return /^<img\s/i.test(styled) ? styled.replace(/(\s)src="/g, '$1data-mail-src="') : styled
  })
}
