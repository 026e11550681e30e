// Checking, sanitising and filling a mail template (CONTRACT §20, Mail templates).
// Placeholders are `{{name}}` (spaces inside the braces allowed). A template must hold the
// placeholder its kind needs in its text (and in its HTML when it has one) and no other than
// its kind fills; the HTML is sanitized with sanitize-html (an allowlist: no script, no event
// handler, no `javascript:` URL, no form) before it is stored; values are HTML-escaped in
// the HTML part and kept on one line in the subject.
import sanitizeHtml from 'sanitize-html'
import { escapeHtml } from '../../lib/mailer.ts'
import {
  KIND_PLACEHOLDERS,
  type MailKind,
  type Placeholder,
  SECURITY_ALERT_PREFIX,
  type TemplateValues,
} from './kinds.ts'

export interface TemplateParts {
  subject: string
  text: string
  html?: string | null
}

export interface Rendered {
  subject: string
  text: string
  html: string
}

export interface Issue {
  path: string
  message: string
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g

/** The placeholder names a part names, in order, each once. */
export function placeholdersIn(part: string): string[] {
  return [...new Set([...part.matchAll(PLACEHOLDER)].map((m) => m[1] ?? ''))]
}

/** Everything wrong with a template of `kind`, each issue at its field (`body.text`…). */
export function templateIssues(kind: MailKind, parts: TemplateParts): Issue[] {
  const { required, allowed } = KIND_PLACEHOLDERS[kind]
  const issues: Issue[] = []
  const fields = [
    ['subject', parts.subject],
    ['text', parts.text],
    ...(parts.html == null ? [] : [['html', parts.html] as const]),
  ] as const
  for (const [field, value] of fields) {
    for (const name of placeholdersIn(value)) {
      if (!(allowed as readonly string[]).includes(name)) {
        issues.push({
          path: `body.${field}`,
          message: `unknown placeholder {{${name}}} for ${kind}; allowed: ${allowed.map((p) => `{{${p}}}`).join(', ')}`,
        })
      }
    }
    if (field === 'subject') continue
    const named = placeholdersIn(value)
    for (const need of required) {
      if (!named.includes(need)) {
        issues.push({ path: `body.${field}`, message: `must contain {{${need}}} (${kind})` })
      }
    }
  }
  if (/[\r\n]/.test(parts.subject)) {
    issues.push({ path: 'body.subject', message: 'must be one line' })
  }
  return issues
}

/** Property values a style attribute may hold: no `url(`, no `expression(`. */
const STYLE_VALUE = /^(?!.*(?:url|expression)\s*\()[-#%.,\w\s'"()!/]*$/i
const STYLED = [
  'color',
  'background-color',
  'font-family',
  'font-size',
  'font-weight',
  'font-style',
  'line-height',
  'letter-spacing',
  'text-align',
  'text-decoration',
  'padding',
  'margin',
  'border',
  'border-radius',
  'width',
  'max-width',
  'display',
]

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'center'],
  allowedAttributes: {
    a: ['href', 'name', 'target', 'title', 'style'],
    img: ['src', 'alt', 'title', 'width', 'height', 'style'],
    table: ['width', 'border', 'cellpadding', 'cellspacing', 'align', 'style'],
    td: ['colspan', 'rowspan', 'align', 'valign', 'width', 'style'],
    th: ['colspan', 'rowspan', 'align', 'valign', 'width', 'style'],
    '*': ['style', 'align', 'dir', 'lang'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  allowedStyles: { '*': Object.fromEntries(STYLED.map((p) => [p, [STYLE_VALUE]])) },
}

/** The HTML as it is stored and sent: only what the allowlist keeps. */
export function sanitize(html: string): string {
  return sanitizeHtml(html, SANITIZE)
}

function fill(part: string, values: TemplateValues, encode: (v: string) => string): string {
  return part.replace(PLACEHOLDER, (_all, name: string) =>
    encode(values[name as Placeholder] ?? ''),
  )
}

/** A text part as HTML: escaped, a paragraph per blank-line block, `{{link}}` a link. */
function htmlOfText(text: string, values: TemplateValues): string {
  const link = values.link ?? ''
  const anchor = `<a href="${escapeHtml(link)}">${escapeHtml(link)}</a>`
  return text
    .split(/\r?\n\s*\r?\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const escaped = escapeHtml(block).replace(/\r?\n/g, '<br>')
      const linked = escaped.replace(/\{\{\s*link\s*\}\}/g, anchor)
      return `<p>${fill(linked, values, escapeHtml)}</p>`
    })
    .join('')
}

const wrap = (body: string) =>
  `<!doctype html><html><body style="font-family:sans-serif">${body}</body></html>`

/** The mail a template words, with `values` in its placeholders. */
export function renderTemplate(
  kind: MailKind,
  parts: TemplateParts,
  values: TemplateValues,
): Rendered {
  const line = (v: string) => v.replace(/[\r\n\t]+/g, ' ')
  let subject = line(fill(parts.subject, values, line)).trim()
  if (kind === 'security_alert' && !subject.startsWith(SECURITY_ALERT_PREFIX)) {
    subject = `${SECURITY_ALERT_PREFIX}${subject}`
  }
  const text = fill(parts.text, values, (v) => v)
  // Sanitized again once filled: a value inside an attribute could otherwise complete a
  // scheme the stored template did not hold (`href="java{{tenant.name}}"`).
  const html =
    parts.html == null
      ? htmlOfText(parts.text, values)
      : sanitize(fill(parts.html, values, escapeHtml))
  return { subject, text, html: wrap(html) }
}
