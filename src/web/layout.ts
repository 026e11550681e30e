// The shell of every hosted page and the pieces forms are made of. Accessible by
// construction: one <main> and one <h1> per page, a label for every input, errors tied to
// their field with aria-describedby and aria-invalid, and a summary at the top that takes
// the focus (with JavaScript) so a screen-reader or keyboard user hears what went wrong.
import type { Tenant } from '../modules/tenants/service.ts'
import { type Html, html } from './html.ts'

export interface Brand {
  tenant: Pick<Tenant, 'name' | 'slug'>
  /** The tenant's logo URL, when it has one. */
  logoUrl?: string
}

export interface PageOptions {
  wide?: boolean
  /**
   * A same-site URL the browser goes on to at once (a meta refresh: a navigation of its
   * own, which the CSP's form-action does not hold to 'self' as it does the redirects that
   * answer a form).
   */
  refreshTo?: string
  /** A page with nothing for the pages' script to do (an error page): no script at all. */
  noScript?: boolean
}

export function page(brand: Brand, title: string, body: Html, options: PageOptions = {}) {
  const { tenant, logoUrl } = brand
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${options.refreshTo ? html`<meta http-equiv="refresh" content="0;url=${options.refreshTo}">` : ''}
<title>${title} · ${tenant.name}</title>
<link rel="stylesheet" href="/assets/pages.css">
${options.noScript ? '' : html`<script src="/assets/pages.js" defer></script>`}
</head>
<body>
<header class="brand">
  ${logoUrl ? html`<img src="${logoUrl}" alt="" class="logo" width="40" height="40">` : html`<span class="logo initial" aria-hidden="true">${tenant.name.slice(0, 1).toUpperCase()}</span>`}
  <span class="tenant-name">${tenant.name}</span>
</header>
<main class="${options.wide ? 'card wide' : 'card'}">
${body}
</main>
</body>
</html>`
}

/** Field errors by field name, plus a message for the whole form. */
export interface FormErrors {
  form?: string
  fields?: Record<string, string>
}

export function errorSummary(errors: FormErrors | undefined): Html | '' {
  if (!errors?.form && !errors?.fields) return ''
  const items = Object.entries(errors.fields ?? {})
  return html`<div class="error-summary" role="alert" tabindex="-1" data-focus>
  <p>${errors.form ?? 'Please check the form.'}</p>
  ${items.length > 0 && html`<ul>${items.map(([name, message]) => html`<li><a href="#${name}">${message}</a></li>`)}</ul>`}
</div>`
}

export function notice(text: string | undefined): Html | '' {
  return text ? html`<div class="notice" role="status">${text}</div>` : ''
}

export interface FieldOptions {
  name: string
  label: string
  type?: string
  value?: string
  autocomplete?: string
  hint?: string
  required?: boolean
  inputmode?: string
  pattern?: string
  errors?: FormErrors
}

export function field(o: FieldOptions): Html {
  const error = o.errors?.fields?.[o.name]
  const described = [o.hint && `${o.name}-hint`, error && `${o.name}-error`]
    .filter(Boolean)
    .join(' ')
  return html`<div class="${error ? 'field has-error' : 'field'}">
  <label for="${o.name}">${o.label}</label>
  ${o.hint && html`<p class="hint" id="${o.name}-hint">${o.hint}</p>`}
  ${error && html`<p class="field-error" id="${o.name}-error">${error}</p>`}
  <input id="${o.name}" name="${o.name}" type="${o.type ?? 'text'}"${o.value !== undefined && o.type !== 'password' ? html` value="${o.value}"` : ''}${o.autocomplete ? html` autocomplete="${o.autocomplete}"` : ''}${o.inputmode ? html` inputmode="${o.inputmode}"` : ''}${o.pattern ? html` pattern="${o.pattern}"` : ''}${o.required === false ? '' : html` required`}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}>
</div>`
}

export function hidden(name: string, value: string): Html {
  return html`<input type="hidden" name="${name}" value="${value}">`
}

/** A form that posts to `action` with the CSRF field; `danger` for an action that destroys. */
export function form(
  action: string,
  csrf: string,
  body: Html,
  submit: string,
  options: { danger?: boolean } = {},
): Html {
  return html`<form method="post" action="${action}" novalidate>
${hidden('_csrf', csrf)}
${body}
<button type="submit" class="${options.danger ? 'danger' : 'primary'}">${submit}</button>
</form>`
}

/** The email address field every request form starts with. */
export function emailField(value: string | undefined, errors: FormErrors | undefined): Html {
  return field({
    name: 'email',
    label: 'Email address',
    type: 'email',
    autocomplete: 'username',
    value,
    errors,
  })
}

/** A 6-digit code field (mailed codes, authenticator codes). */
export function codeField(name: string, label: string, errors: FormErrors | undefined): Html {
  return field({
    name,
    label,
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]{6}',
    errors,
  })
}
