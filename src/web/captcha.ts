// The CAPTCHA on the hosted pages (CONTRACT §21): the pages of the actions the tenant's
// `captcha.on` names (sign-up, sign-in and its second step, the reset request, the
// login-code request) embed its widget in the form and send its answer on as the API's
// `captchaToken`. ALTCHA's widget is served by the service itself (the altcha package's
// strict-CSP build, its PBKDF2 worker and stylesheet, under /assets/altcha/), so its pages'
// CSP stays 'self'; a third-party widget is loaded from its provider, and only the page
// that shows it opens the CSP to that provider's origins (CAPTCHA_ORIGINS), nowhere else.
import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Translate } from '../i18n/index.ts'
import type { CaptchaAction, CaptchaProvider } from '../modules/captcha/schemas.ts'
import { captchaFor } from '../modules/captcha/settings.ts'
import { escapeText, type Html, html } from './html.ts'

/** The origins a third-party widget needs, by CSP directive (the providers' documentation). */
export const CAPTCHA_ORIGINS: Record<
  Exclude<CaptchaProvider, 'altcha'>,
  { script: string[]; frame: string[]; style?: string[]; connect?: string[] }
> = {
  turnstile: {
    script: ['https://challenges.cloudflare.com'],
    frame: ['https://challenges.cloudflare.com'],
  },
  hcaptcha: {
    script: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
    frame: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
    style: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
    connect: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
  },
  recaptcha: {
    script: ['https://www.google.com/recaptcha/', 'https://www.gstatic.com/recaptcha/'],
    frame: ['https://www.google.com/recaptcha/', 'https://recaptcha.google.com/recaptcha/'],
  },
}

/** The provider's script, loaded by the page that shows its widget. */
const SCRIPTS: Record<Exclude<CaptchaProvider, 'altcha'>, string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/api.js',
  hcaptcha: 'https://js.hcaptcha.com/1/api.js',
  recaptcha: 'https://www.google.com/recaptcha/api.js',
}

/** The form field each widget writes its answer to. */
const FIELDS: Record<CaptchaProvider, string> = {
  altcha: 'captchaToken',
  turnstile: 'cf-turnstile-response',
  hcaptcha: 'h-captcha-response',
  recaptcha: 'g-recaptcha-response',
}

/** The tenant's CAPTCHA of `action`, as the page needs it (undefined: none). */
export function pageCaptcha(request: FastifyRequest, action: CaptchaAction) {
  const captcha = captchaFor(request.tenant, action)
  return captcha && { provider: captcha.provider, siteKey: captcha.siteKey ?? '' }
}

export type PageCaptcha = NonNullable<ReturnType<typeof pageCaptcha>>

/** The widget inside a form ('' when the action asks for none). */
export function captchaWidget(
  request: FastifyRequest,
  action: CaptchaAction,
  t: Translate,
): Html | '' {
  const captcha = pageCaptcha(request, action)
  if (!captcha) return ''
  if (captcha.provider === 'altcha') {
    // The widget's words in the page's language (captcha.js hands them to the widget). Its
    // footer is markup the widget draws: the translated words escaped, the link ours.
    const link = html`<a href="https://altcha.org/" target="_blank" rel="noopener" tabindex="-1" aria-label="${t('captcha.altchaLink')}">ALTCHA</a>`
    const footer = t('captcha.footer', { altcha: '\u0000' })
      .split('\u0000')
      .map(escapeText)
      .join(link.value)
    const strings = JSON.stringify({
      footer,
      ariaLinkLabel: t('captcha.altchaLink'),
      loading: t('captcha.loading'),
      label: t('captcha.label'),
      verifying: t('captcha.verifying'),
      verified: t('captcha.verified'),
      verificationRequired: t('captcha.required'),
      waitAlert: t('captcha.wait'),
      error: t('captcha.error'),
      expired: t('captcha.expired'),
    })
    return html`<div class="field captcha"><altcha-widget challenge="/v1/${request.tenant.slug}/captcha/challenge" name="captchaToken" data-strings="${strings}"></altcha-widget></div>`
  }
  const kind = { turnstile: 'cf-turnstile', hcaptcha: 'h-captcha', recaptcha: 'g-recaptcha' }
  return html`<div class="field captcha"><div class="${kind[captcha.provider]}" data-sitekey="${captcha.siteKey}"></div></div>`
}

/** The widget's answer in a posted form, for the API's `captchaToken` (undefined: none). */
export function captchaTokenOf(
  request: FastifyRequest,
  action: CaptchaAction,
  body?: Record<string, string>,
) {
  const captcha = pageCaptcha(request, action)
  if (!captcha) return undefined
  const value = body?.[FIELDS[captcha.provider]]
  return typeof value === 'string' && value !== '' ? value : undefined
}

/** What the page's head loads for the widget. */
export function captchaHead(captcha: PageCaptcha | undefined): Html | '' {
  if (!captcha) return ''
  if (captcha.provider === 'altcha') {
    return html`<link rel="stylesheet" href="/assets/altcha/altcha.css">
<script type="module" src="/assets/altcha/altcha.js"></script>
<script type="module" src="/assets/captcha.js"></script>`
  }
  return html`<script src="${SCRIPTS[captcha.provider]}" async defer></script>`
}

/** The page's CSP with the provider's origins added where its widget needs them. */
export function captchaCsp(base: string, captcha: PageCaptcha | undefined): string {
  if (!captcha) return base
  if (captcha.provider === 'altcha') return `${base}; worker-src 'self'`
  const origins = CAPTCHA_ORIGINS[captcha.provider]
  const add = (directive: string, extra: string[] | undefined) => (value: string) =>
    extra && value.startsWith(`${directive} `) ? `${value} ${extra.join(' ')}` : value
  const directives = base
    .split('; ')
    .map(add('script-src', origins.script))
    .map(add('style-src', origins.style))
    .map(add('connect-src', origins.connect))
  return [...directives, `frame-src ${origins.frame.join(' ')}`].join('; ')
}

/** The files of the altcha package the ALTCHA pages load, and the pages' own glue. */
const ALTCHA_ASSETS = {
  'altcha/altcha.js': ['altcha/external', 'text/javascript; charset=utf-8'],
  'altcha/altcha.css': ['altcha/altcha.css', 'text/css; charset=utf-8'],
  'altcha/pbkdf2.js': ['altcha/workers/pbkdf2', 'text/javascript; charset=utf-8'],
} as const

export async function captchaAssetRoutes(app: FastifyInstance): Promise<void> {
  const files: [string, Buffer, string][] = [
    ...Object.entries(ALTCHA_ASSETS).map(
      ([path, [spec, type]]) =>
        [path, readFileSync(new URL(import.meta.resolve(spec))), type] as [string, Buffer, string],
    ),
    [
      'captcha.js',
      readFileSync(new URL('./assets/captcha.js', import.meta.url)),
      'text/javascript; charset=utf-8',
    ],
  ]
  for (const [path, body, type] of files) {
    app.get(`/assets/${path}`, { schema: { hide: true } }, async (_request, reply) =>
      reply
        .type(type)
        .header('cache-control', 'public, max-age=300')
        .header('x-content-type-options', 'nosniff')
        .send(body),
    )
  }
}
