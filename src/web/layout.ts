// The shell of every hosted page and the pieces forms are made of. Accessible by
// construction: one <main> and one <h1> per page, a label for every input, errors tied to
// their field with aria-describedby and aria-invalid, and a summary at the top that takes
// the focus (with JavaScript) so a screen-reader or keyboard user hears what went wrong.
import {
  DEFAULT_LOCALE,
  dir,
  localeName,
  supportedLocales,
  type Translate,
  translator,
} from '../i18n/index.ts'
import type { Branding } from '../modules/tenants/branding.ts'
import type { Tenant } from '../modules/tenants/service.ts'
import { brandingHead, brandingLinks, themeOf } from './branding.ts'
import { captchaHead, type PageCaptcha } from './captcha.ts'
import { type Html, html } from './html.ts'

export interface Brand {
  tenant: Pick<Tenant, 'name' | 'slug'>
  /** The tenant's logo URL, when it has one. */
  logoUrl?: string
  /** The tenant's branding (CONTRACT §20), when it has one. */
  branding?: Branding | null
  /** The request's negotiated locale (i18n/index.ts); the default when not given. */
  locale?: string
  /** The locales the language picker offers (default: every supported one). */
  locales?: readonly string[]
  /** The page's own path and query, for the language picker's links (`?lang=`). */
  path?: string
}

/** The English translator, for the helpers a page calls without its own. */
const english = translator(DEFAULT_LOCALE)

/**
 * The language picker: a link per language to the same page with `?lang=` (remembered in a
 * cookie by the pages), each named in its own language and marked with its `lang`/`hreflang`;
 * plain links, so a keyboard reaches them with Tab and no script is needed.
 */
function languagePicker(brand: Brand, locale: string, t: Translate): Html | '' {
  const locales = brand.locales ?? supportedLocales
  if (locales.length < 2) return ''
  const target = new URL(brand.path ?? '/', 'http://x')
  return html`<nav class="languages" aria-label="${t('layout.language')}">
<ul>${locales.map((l) => {
    target.searchParams.set('lang', l)
    const href = `${target.pathname}${target.search}`
    return html`<li><a href="${href}" lang="${l}" hreflang="${l}"${l === locale ? html` aria-current="true"` : ''}>${localeName(l)}</a></li>`
  })}</ul>
</nav>`
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
  /** The CAPTCHA whose widget the page shows (web/captcha.ts): its scripts, its CSP. */
  captcha?: PageCaptcha
}

/**
 * The tenant's logo, its initial without one; with a dark logo (CONTRACT §20) that one on a
 * dark page: always under darkMode `dark`, where the browser prefers dark under `auto`.
 */
function logo(brand: Brand): Html {
  const { tenant, logoUrl, branding } = brand
  const dark = branding?.darkLogoUrl
  const img = (src: string) => html`<img src="${src}" alt="" class="logo" width="40" height="40">`
  const initial = html`<span class="logo initial" aria-hidden="true">${tenant.name.slice(0, 1).toUpperCase()}</span>`
  if (dark && themeOf(branding) === 'dark') return img(dark)
  if (dark && themeOf(branding) === 'auto' && logoUrl) {
    return html`<picture><source srcset="${dark}" media="(prefers-color-scheme: dark)">${img(logoUrl)}</picture>`
  }
  return logoUrl ? img(logoUrl) : initial
}

export function page(brand: Brand, title: string, body: Html, options: PageOptions = {}) {
  const { tenant, branding } = brand
  const locale = brand.locale ?? DEFAULT_LOCALE
  const t = translator(locale)
  const theme = themeOf(branding)
  return html`<!doctype html>
<html lang="${locale}" dir="${dir(locale)}"${theme ? html` data-theme="${theme}"` : ''}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${options.refreshTo ? html`<meta http-equiv="refresh" content="0;url=${options.refreshTo}">` : ''}
<title>${title} · ${tenant.name}</title>
<link rel="stylesheet" href="/assets/pages.css">
${brandingHead(tenant.slug, branding)}
${options.noScript ? '' : html`<script src="/assets/pages.js" defer></script>`}
${captchaHead(options.captcha)}
</head>
<body>
<header class="brand">
  ${logo(brand)}
  <span class="tenant-name">${tenant.name}</span>
</header>
<main class="${options.wide ? 'card wide' : 'card'}">
${body}
</main>
${languagePicker(brand, locale, t)}
${brandingLinks(branding, t)}
</body>
</html>`
}

/** Field errors by field name, plus a message for the whole form. */
export interface FormErrors {
  form?: string
  fields?: Record<string, string>
}

export function errorSummary(errors: FormErrors | undefined, t: Translate = english): Html | '' {
  if (!errors?.form && !errors?.fields) return ''
  const items = Object.entries(errors.fields ?? {})
  return html`<div class="error-summary" role="alert" tabindex="-1" data-focus>
  <p>${errors.form ?? t('layout.formErrors')}</p>
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
  /** `more`: another submit button after the main one (which stays the one Enter presses). */
  options: { danger?: boolean; more?: Html } = {},
): Html {
  return html`<form method="post" action="${action}" novalidate>
${hidden('_csrf', csrf)}
${body}
<button type="submit" class="${options.danger ? 'danger' : 'primary'}">${submit}</button>${options.more ? html` ${options.more}` : ''}
</form>`
}

/** The email address field every request form starts with. */
export function emailField(
  value: string | undefined,
  errors: FormErrors | undefined,
  t: Translate = english,
): Html {
  return field({
    name: 'email',
    label: t('layout.emailLabel'),
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
