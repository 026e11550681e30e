// A tenant's branding on its hosted pages (CONTRACT §20; the setting: modules/tenants/
// branding.ts). The colours and the tenant's CSS are one stylesheet of this service's own
// origin, `/t/{slug}/branding.css?v={digest}` (so `style-src 'self'` stays the pages' CSP and
// a changed branding is a new URL); dark mode is the pages' own palette (assets/pages.css,
// `data-theme` on <html>); the dark logo and the favicon are the tenant's https images, whose
// origins alone join `img-src` on that tenant's pages; the privacy, terms and support links
// close every page.
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Translate } from '../i18n/index.ts'
import type { Branding } from '../modules/tenants/branding.ts'
import { type Html, html } from './html.ts'

/** The stylesheet of a branding: its colours as the pages' variables, then the tenant's CSS. */
export function brandingCss(branding: Branding): string {
  const vars = [
    `--accent: ${branding.primaryColor};`,
    `--link: ${branding.primaryColor};`,
    ...(branding.backgroundColor ? [`--bg: ${branding.backgroundColor};`] : []),
  ]
  return `:root { ${vars.join(' ')} }\n${branding.customCss ?? ''}\n`
}

const digest = (branding: Branding) =>
  createHash('sha256').update(brandingCss(branding)).digest('base64url').slice(0, 16)

/** What the page's <head> gains: the stylesheet and the favicon. */
export function brandingHead(slug: string, branding: Branding | null | undefined): Html | '' {
  if (!branding) return ''
  return html`<link rel="stylesheet" href="/t/${slug}/branding.css?v=${digest(branding)}">
${branding.faviconUrl ? html`<link rel="icon" href="${branding.faviconUrl}">` : ''}`
}

/** The <html> element's `data-theme`: the branding's darkMode (none without branding: light). */
export const themeOf = (branding: Branding | null | undefined): string | undefined =>
  branding ? (branding.darkMode ?? 'auto') : undefined

/** The links that close every page of a branded tenant ('' without any). */
export function brandingLinks(branding: Branding | null | undefined, t: Translate): Html | '' {
  if (!branding) return ''
  const links: Html[] = []
  if (branding.privacyPolicyUrl) {
    links.push(html`<li><a href="${branding.privacyPolicyUrl}">${t('layout.privacy')}</a></li>`)
  }
  if (branding.termsUrl)
    links.push(html`<li><a href="${branding.termsUrl}">${t('layout.terms')}</a></li>`)
  if (branding.supportEmail) {
    links.push(
      html`<li><a href="mailto:${branding.supportEmail}">${t('layout.support', { email: branding.supportEmail })}</a></li>`,
    )
  }
  if (links.length === 0) return ''
  return html`<footer class="site-links"><ul>${links}</ul></footer>`
}

/** The pages' CSP with the origins of the tenant's dark logo and favicon in `img-src`. */
export function brandingCsp(csp: string, branding: Branding | null | undefined): string {
  if (!branding) return csp
  const origins = [branding.darkLogoUrl, branding.faviconUrl]
    .filter((u): u is string => typeof u === 'string')
    .map((u) => new URL(u).origin)
  if (origins.length === 0) return csp
  const extra = [...new Set(origins)].join(' ')
  return csp
    .split('; ')
    .map((d) => (d.startsWith('img-src ') ? `${d} ${extra}` : d))
    .join('; ')
}

/** GET /t/{slug}/branding.css: the tenant's stylesheet (404 without branding). */
export function brandingRoutes(app: FastifyInstance): void {
  app.get('/branding.css', async (request, reply) => {
    const { branding } = request.tenant
    if (!branding) return reply.code(404).type('text/css; charset=utf-8').send('')
    return reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .header('x-content-type-options', 'nosniff')
      .send(brandingCss(branding))
  })
}
