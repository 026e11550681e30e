// HTML as tagged templates: every interpolated value is escaped unless it is itself
// `Html` (made by `html` or `raw`), so a page cannot be broken into by what a user, a
// tenant admin or an error message wrote. Arrays are joined; null, undefined and false
// render nothing, so `${cond && html`…`}` reads naturally.

export class Html {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeText(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c])
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return ''
  if (value instanceof Html) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  return escapeText(String(value))
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new Html(out)
}

/** Trusted markup (an SVG the service rendered itself): never for anything a person typed. */
export function raw(markup: string): Html {
  return new Html(markup)
}
