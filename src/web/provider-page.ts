// The pages oidc-provider draws itself (the device flow's and the logout's, through the
// `*Source` hooks of its features) in the hosted pages' look: the same shell (layout.ts),
// the tenant's name and logo, and the same security headers. The hooks receive Koa's
// context, not Fastify's, so this writes the response there.
import { createHash } from 'node:crypto'
import type { Db } from '../db/client.ts'
import { negotiate, offeredLocales, type Translate, translator } from '../i18n/index.ts'
import { tenantById } from '../modules/tenants/service.ts'
import type { Html } from './html.ts'
import { CSP, openerPolicy, type PageKind, pageHeaders } from './http.ts'
import { rememberedLang } from './lang-cookie.ts'
import { page } from './layout.ts'

/** What the hooks use of Koa's context. */
export interface KoaContext {
  status: number
  type: string
  body: unknown
  set(name: string, value: string): void
  append(name: string, value: string): void
  get(name: string): string
  ip: string
  /** The request's path and query (for the language picker). */
  url?: string
  query?: Record<string, unknown>
}

type FoundTenant = Awaited<ReturnType<typeof tenantById>>

/** The tenant of a page being drawn, read once per request (the locale and the brand need it). */
const tenants = new WeakMap<KoaContext, Promise<FoundTenant>>()
function tenantOf(db: Db, tenantId: string, ctx: KoaContext): Promise<FoundTenant> {
  let found = tenants.get(ctx)
  if (!found) {
    found = tenantById({ db }, tenantId)
    tenants.set(ctx, found)
  }
  return found
}

/**
 * The locale of a page oidc-provider draws (i18n/index.ts `negotiate`): its `lang` query
 * parameter, the pages' `lang` cookie, Accept-Language, the tenant's default, among the
 * tenant's locales (read only: the cookie is written by the hosted pages' picker).
 */
export function providerLocale(
  ctx: KoaContext,
  tenant?: { slug: string; locales: string[] | null; defaultLocale: string },
): string {
  const lang = ctx.query?.lang
  return negotiate({
    query: typeof lang === 'string' ? lang : undefined,
    cookie: rememberedLang(ctx.get('cookie') || undefined, tenant?.slug),
    acceptLanguage: ctx.get('accept-language') || undefined,
    tenantDefault: tenant?.defaultLocale,
    available: offeredLocales(tenant?.locales),
  })
}

/** The translator for a page oidc-provider draws for the tenant. */
export async function providerT(db: Db, tenantId: string, ctx: KoaContext): Promise<Translate> {
  const found = await tenantOf(db, tenantId, ctx)
  return translator(providerLocale(ctx, found?.tenant))
}

export interface ProviderPageOptions extends PageKind {
  status?: number
  /**
   * Where the page's form may lead besides this service: a form's redirect to another
   * origin (the application's post-logout URI) is held to the CSP's form-action.
   */
  formLeadsTo?: string
  /** No script in the page (layout.ts). */
  noScript?: boolean
}

/** The CSP source of a URI a form's redirect may reach: its origin, or its private-use scheme. */
function sourceOf(uri: string): string | undefined {
  try {
    const url = new URL(uri)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol
  } catch {
    return undefined
  }
}

export async function sendProviderPage(
  db: Db,
  tenantId: string,
  ctx: KoaContext,
  title: string,
  body: Html,
  options: ProviderPageOptions,
): Promise<void> {
  const found = await tenantOf(db, tenantId, ctx)
  const tenant = found?.tenant ?? { name: 'Sign-in', slug: '' }
  const brand = {
    tenant,
    logoUrl: found?.hasLogo ? `/v1/${tenant.slug}/logo` : undefined,
    locale: providerLocale(ctx, found?.tenant),
    locales: offeredLocales(found?.tenant.locales),
    path: ctx.url,
  }
  for (const [name, value] of Object.entries(pageHeaders(options))) ctx.set(name, value)
  const extra = options.formLeadsTo ? sourceOf(options.formLeadsTo) : undefined
  if (extra) {
    ctx.set(
      'content-security-policy',
      CSP.replace("form-action 'self'", `form-action 'self' ${extra}`),
    )
  }
  ctx.status = options.status ?? 200
  ctx.type = 'text/html; charset=utf-8'
  ctx.body = page(brand, title, body, { noScript: options.noScript }).value
}

/** What the headers middleware uses of Koa's context. */
interface KoaResponseContext {
  status: number
  type: string
  body: unknown
  set(name: string, value: string): void
  response: { get(name: string): string }
  oidc?: { entities?: { Interaction?: { params?: { redirect_uri?: unknown } } } }
}

const unescapeAttribute = (value: string) =>
  value
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')

/**
 * A Provider middleware (installed by web/pages/authorize.ts): the HTML oidc-provider
 * writes itself without one of the hooks above (its auto-submitting form_post pages: the
 * account switch's step to end_session_confirm, a `response_mode=form_post` answer) gets
 * the pages' headers too (issue 36 P5). Its CSP allows exactly that page's inline script
 * (by its hash), the origin its form posts to and, as a form's redirects are held to
 * form-action too, the origin of the redirect URI of the authorization it resumes (the
 * account switch's post goes on to the application). These pages and the provider's
 * redirects are steps of an application's authorization or sign-out, so their
 * Cross-Origin-Opener-Policy is `unsafe-none` (http.ts, openerPolicy).
 */
export async function providerHtmlHeaders(ctx: KoaResponseContext, next: () => Promise<void>) {
  await next()
  if (!String(ctx.type).startsWith('text/html') || typeof ctx.body !== 'string') {
    // A redirect of the provider's (to the interaction page, on to the application): a step
    // of the application's request, which a popup may carry (http.ts, openerPolicy).
    if (ctx.status >= 300 && ctx.status < 400 && !ctx.response.get('cross-origin-opener-policy')) {
      ctx.set('cross-origin-opener-policy', openerPolicy({ authorization: true }))
    }
    return
  }
  if (ctx.response.get('content-security-policy')) return
  const body = ctx.body
  const hashes = [...body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, script]) => `'sha256-${createHash('sha256').update(script).digest('base64')}'`,
  )
  const targets = [...body.matchAll(/<form method="post" action="([^"]*)"/g)]
    .map(([, action]) => sourceOf(unescapeAttribute(action)))
    .filter((source): source is string => source !== undefined)
  const resumed = ctx.oidc?.entities?.Interaction?.params?.redirect_uri
  const back = typeof resumed === 'string' ? sourceOf(resumed) : undefined
  if (back) targets.push(back)
  // Steps of an application's authorization or sign-out (a redirect's body, a form_post).
  for (const [name, value] of Object.entries(pageHeaders({ authorization: true }))) {
    ctx.set(name, value)
  }
  ctx.set(
    'content-security-policy',
    CSP.replace("script-src 'self'", ["script-src 'self'", ...hashes].join(' ')).replace(
      "form-action 'self'",
      ["form-action 'self'", ...new Set(targets)].join(' '),
    ),
  )
}
