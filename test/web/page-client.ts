// A browser without JavaScript, for testing the hosted pages over HTTP: it keeps cookies
// (by name; every cookie the pages set is scoped to the tenant's path), follows a 303 like
// a browser, and posts forms with the CSRF field of the last page it was shown.
import type { TestServer } from '../helpers.ts'

export interface Page {
  status: number
  html: string
  headers: Headers
  url: string
}

export class PageClient {
  readonly cookies = new Map<string, string>()
  /** Headers sent with every request of `send` (e.g. Accept-Language). */
  readonly headers: Record<string, string> = {}
  /** The whole Set-Cookie line that last set each cookie, attributes included. */
  readonly setCookieLines = new Map<string, string>()
  last: Page | undefined
  private readonly server: Pick<TestServer, 'url'>
  readonly ip: string

  constructor(server: Pick<TestServer, 'url'>, ip = '203.0.113.10') {
    this.server = server
    this.ip = ip
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  private keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const value = pair.slice(eq + 1).trim()
      if (attrs.some((a) => a.trim().toLowerCase() === 'max-age=0')) this.cookies.delete(name)
      else this.cookies.set(name, value)
      this.setCookieLines.set(name, line)
    }
  }

  async get(path: string): Promise<Page> {
    return this.send('GET', path)
  }

  /** Posts `fields` with the CSRF field of the last page (or `_csrf` given in fields). */
  async post(path: string, fields: Record<string, string>): Promise<Page> {
    const body = new URLSearchParams({ _csrf: this.csrf(), ...fields }).toString()
    return this.send('POST', path, body)
  }

  csrf(): string {
    return (this.last && hiddenValue(this.last.html, '_csrf')) ?? ''
  }

  /** One request to `url`, redirects not followed, its cookies kept (a step of a flow). */
  async once(method: string, url: string, fields?: Record<string, string>): Promise<Response> {
    const body = fields ? new URLSearchParams(fields).toString() : undefined
    const res = await fetch(new URL(url, this.server.url), {
      method,
      body,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'x-forwarded-for': this.ip,
        ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
    })
    this.keep(res)
    return res
  }

  async send(
    method: string,
    path: string,
    body?: string,
    type = 'application/x-www-form-urlencoded',
  ) {
    let url = new URL(path, this.server.url).toString()
    let res = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        'x-forwarded-for': this.ip,
        'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0',
        ...this.headers,
        ...(body !== undefined ? { 'content-type': type } : {}),
      },
    })
    this.keep(res)
    for (let hops = 0; res.status === 303 || res.status === 302; hops++) {
      if (hops > 5) throw new Error('too many redirects')
      url = new URL(res.headers.get('location') ?? '', url).toString()
      res = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: this.cookieHeader(), 'x-forwarded-for': this.ip, ...this.headers },
      })
      this.keep(res)
    }
    const page = { status: res.status, html: await res.text(), headers: res.headers, url }
    this.last = page
    return page
  }
}

/** The value of the first hidden input named `name`, unescaped. */
export function hiddenValue(html: string, name: string): string | undefined {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html)
  return match ? unescapeHtml(match[1]) : undefined
}

export function unescapeHtml(text: string): string {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
}

/** The visible text of a page, roughly: tags removed, whitespace collapsed. */
export function textOf(html: string): string {
  return unescapeHtml(html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<[^>]+>/g, ' '))
    .replace(/\s+/g, ' ')
    .trim()
}

/**
 * Where a page that goes on by itself (Pages.continueTo: a form's answer whose way on
 * leaves the form-action of the CSP) sends the browser: its meta refresh, unescaped.
 */
export function continuesTo(html: string): string | undefined {
  const url = /<meta http-equiv="refresh" content="0;url=([^"]*)">/.exec(html)?.[1]
  return url?.replaceAll('&amp;', '&')
}
