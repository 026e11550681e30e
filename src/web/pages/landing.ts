// The landing page at `/` (issue 20): what a person who just ran `npm start` sees. It says
// what the service is, links to the API reference (/docs) and the admin console (/console/),
// and, while tenant creation is open (no TENANT_CREATION_TOKEN, CONTRACT §1), holds a form
// that creates a workspace and its first admin through POST /v1/tenants, called with the
// SDK over inject like every hosted page (web/api.ts), so the API's rules, limits and audit
// rows apply unchanged. On success the new admin is signed in to the workspace's hosted
// pages (the session POST /v1/tenants answered becomes the page session) and lands in the
// console, signed in there too through a one-time handoff (console-handoff.ts).
//
// CSRF without a tenant: a signed double submit. A random secret per browser in an HttpOnly,
// SameSite=Lax cookie of its own (`__Host-` prefixed over https), and in the form the HMAC of
// that secret under a key derived from the current encryption key. Another site can neither
// read the cookie nor compute the field, and a secret planted by a same-site attacker yields
// a field only the attacker's own browser can send. There is no session here to bind to.
import { createHmac, hkdfSync } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { type MessageKey, type Translate, translator } from '../../i18n/index.ts'
import { randomToken, safeEqual } from '../../lib/crypto.ts'
import { AuthServiceError, apiFor } from '../api.ts'
import { type Html, html } from '../html.ts'
import {
  type Form,
  formText,
  installFormParser,
  readCookies,
  setCookie,
  setPageHeaders,
} from '../http.ts'
import { requestLocale } from '../lang-cookie.ts'
import { errorSummary, type FormErrors, field, form, page } from '../layout.ts'
import { beginSession } from '../session.ts'
import { consoleHandoffRoute, sealHandoff } from './console-handoff.ts'

/** The page's brand: the service's name, in the request's language, and every language. */
const service = (t: Translate, locale: string, path: string) => ({
  tenant: { name: t('landing.service'), slug: '' },
  locale,
  path,
})

/** The fields of the form, as POST /v1/tenants names them in `details.issues[].path`. */
const FIELDS = {
  name: 'body.tenant.name',
  slug: 'body.tenant.slug',
  email: 'body.admin.email',
  password: 'body.admin.password',
} as const
type FieldName = keyof typeof FIELDS

interface Values {
  name: string
  slug: string
  email: string
}

export async function landingRoutes(app: FastifyInstance, { deps }: { deps: Deps }) {
  installFormParser(app)
  const csrf = landingCsrf(deps)
  const open = () => deps.config.tenantCreationToken === undefined
  consoleHandoffRoute(app, deps, (request) => csrf.secret(request))

  // The page's language (CONTRACT §20): `?lang=` (the picker's links), else Accept-Language.
  const localeOf = (request: FastifyRequest) => requestLocale(request, deps.config.publicUrl)
  const send = (request: FastifyRequest, reply: FastifyReply, body: Html, status = 200) => {
    setPageHeaders(reply, { authorization: false })
    const locale = localeOf(request)
    const t = translator(locale)
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page(service(t, locale, request.url), t('landing.title'), body).value)
  }

  // A body that cannot be read (wrong media type, malformed, too large) is answered as a
  // page, as the hosted pages do, not with the API's JSON envelope.
  app.setErrorHandler(
    async (error: Error & { statusCode?: number; status?: number }, request, reply) => {
      const given = error.statusCode ?? error.status
      const status = given && given >= 400 && given < 500 ? given : 500
      if (status === 500) request.log.error({ err: error }, 'landing page failed')
      const t = translator(localeOf(request))
      const message = t(status === 500 ? 'errors.serverText' : 'errors.badRequestText')
      const body = html`<h1>${t('landing.notServed')}</h1><p>${message}</p>`
      return send(request, reply, body, status)
    },
  )
  const draw = (
    request: FastifyRequest,
    reply: FastifyReply,
    values?: Values,
    errors?: FormErrors,
    status = errors ? 400 : 200,
  ) => {
    const t = translator(localeOf(request))
    const token = open() ? csrf.token(request, reply) : undefined
    return send(request, reply, landing(t, token, values, errors), status)
  }

  // Pages are documents, not API operations: `hide` keeps them out of the OpenAPI document.
  app.get('/', { schema: { hide: true } }, async (request, reply) => draw(request, reply))

  app.post('/', { schema: { hide: true } }, async (request, reply) => {
    const t = translator(localeOf(request))
    if (!open()) {
      return send(
        request,
        reply,
        html`<h1>${t('landing.closedHeading')}</h1><p>${t('landing.closedText', { variable: 'TENANT_CREATION_TOKEN' })}</p><p><a href="/">${t('landing.back')}</a></p>`,
        403,
      )
    }
    const body = request.body as Form | undefined
    const values = {
      name: formText(body, 'name').trim(),
      slug: formText(body, 'slug').trim(),
      email: formText(body, 'email'),
    }
    if (!csrf.valid(request, body?._csrf)) {
      return draw(request, reply, values, {
        form: t('landing.expired'),
      })
    }
    const password = formText(body, 'password')
    try {
      // POST /v1/tenants has no tenant in its path: the client's tenant is never used.
      const envelope = await apiFor(app, request, 'landing').createTenant({
        body: {
          tenant: { slug: values.slug, name: values.name },
          admin: { email: values.email, password },
        },
      })
      const ctx = {
        config: deps.config,
        cipher: deps.cipher,
        tenantId: envelope.user.tenantId,
        slug: envelope.tenantSlug,
      }
      beginSession(ctx, request, reply, {
        accessToken: envelope.accessToken,
        refreshToken: envelope.refreshToken,
        expiresAt: Date.now() + envelope.accessTokenExpiresIn * 1000,
      })
      setPageHeaders(reply, { authorization: false })
      return reply.redirect(
        await consoleLanding(request, envelope.tenantSlug, values.email, password),
        303,
      )
    } catch (error) {
      if (!(error instanceof AuthServiceError) || ![400, 409, 429].includes(error.status)) {
        throw error
      }
      if (error.status === 429) reply.header('retry-after', String(error.retryAfter ?? 60))
      return draw(request, reply, values, errorsOf(error, t), error.status === 429 ? 429 : 400)
    }
  })

  /**
   * Where the new admin goes: the console, signed in by a handoff code in the fragment for a
   * session of its own (the password just given signs it in), or, should that sign-in be
   * refused (a rate limit), the console's sign-in with the workspace filled in.
   */
  async function consoleLanding(
    request: FastifyRequest,
    slug: string,
    email: string,
    password: string,
  ): Promise<string> {
    const signIn = `/console/?tenant=${encodeURIComponent(slug)}`
    const secret = csrf.secret(request)
    if (!secret) return signIn
    try {
      const session = await apiFor(app, request, slug).login({ body: { email, password } })
      const code = sealHandoff(deps, slug, session.refreshToken, secret)
      return `${signIn}#handoff=${encodeURIComponent(code)}`
    } catch (error) {
      if (error instanceof AuthServiceError && error.status < 500) return signIn
      throw error
    }
  }
}

/** The API's refusal beside the field it is about (CONTRACT §2, §3). */
function errorsOf(error: AuthServiceError, t: Translate): FormErrors {
  if (error.status === 429) {
    const wait = Math.max(1, Math.ceil((error.retryAfter ?? 60) / 60))
    return { form: t('landing.tooMany', { wait }) }
  }
  if (error.reason === 'slug_taken') return { fields: { slug: t('landing.slugTaken') } }
  if (error.reason === 'invalid_slug') return { fields: { slug: t('landing.slugReserved') } }
  if (error.reason === 'password_too_weak') {
    return { fields: { password: t('landing.passwordWeak') } }
  }
  const issues = (error.details?.issues ?? []) as Array<{ path?: string; message?: string }>
  const fields: Partial<Record<FieldName, string>> = {}
  for (const issue of issues) {
    const name = (Object.keys(FIELDS) as FieldName[]).find((n) => issue.path === FIELDS[n])
    if (!name || fields[name]) continue
    // A length rule says its number (the password's 12 characters, CONTRACT §4's schema).
    const shorter = /fewer than (\d+) characters/.exec(issue.message ?? '')
    fields[name] =
      shorter && Number(shorter[1]) > 1
        ? t('errors.field.atLeast', { count: Number(shorter[1]) })
        : t(MESSAGES[name])
  }
  if (Object.keys(fields).length > 0) return { fields }
  return { form: t('errors.reason.other') }
}

const MESSAGES: Record<FieldName, MessageKey> = {
  name: 'landing.field.name',
  slug: 'landing.field.slug',
  email: 'landing.field.email',
  password: 'landing.field.password',
}

function landing(
  t: Translate,
  token: string | undefined,
  values?: Values,
  errors?: FormErrors,
): Html {
  return html`<h1>${t('landing.title')}</h1>
<p>${t('landing.intro')}</p>
<ul class="links">
  <li><a href="/docs">${t('landing.apiReference')}</a> (${t('landing.openapi')} <a href="/v1/openapi.json">/v1/openapi.json</a>)</li>
  <li><a href="/console/">${t('account.console')}</a></li>
</ul>
${
  token === undefined
    ? html`<p>${t('landing.closed', { variable: 'TENANT_CREATION_TOKEN' })}</p>`
    : html`<h2>${t('landing.createHeading')}</h2>
<p>${t('landing.createIntro')}</p>
${errorSummary(errors, t)}
${form(
  '/',
  token,
  html`${field({ name: 'name', label: t('landing.name'), value: values?.name, autocomplete: 'organization', errors })}
${field({ name: 'slug', label: t('landing.slug'), hint: t('landing.slugHint', { path: '/t/{address}/' }), value: values?.slug, autocomplete: 'off', errors })}
${field({ name: 'email', label: t('landing.email'), type: 'email', value: values?.email, autocomplete: 'username', errors })}
${field({ name: 'password', label: t('invite.password'), type: 'password', autocomplete: 'new-password', hint: t('password.hint'), errors })}`,
  t('landing.create'),
)}`
}`
}

/** The tenant-less CSRF field: a signed double submit (see the top of this file). */
function landingCsrf(deps: Pick<Deps, 'config'>) {
  const https = deps.config.publicUrl.startsWith('https:')
  const name = https ? '__Host-ta_landing_csrf' : 'ta_landing_csrf'
  const key = Buffer.from(
    hkdfSync('sha256', deps.config.encryptionKeys[0].key, Buffer.alloc(0), 'landing-csrf', 32),
  )
  const mac = (secret: string) => createHmac('sha256', key).update(secret).digest('base64url')
  const issued = new WeakMap<FastifyRequest, string>()
  const cookie = (request: FastifyRequest) => {
    const secret = readCookies(request)[name]
    return secret && secret.length >= 32 ? secret : undefined
  }
  return {
    token(request: FastifyRequest, reply: FastifyReply): string {
      let secret = issued.get(request) ?? cookie(request)
      if (!secret) {
        secret = randomToken(32)
        setCookie(reply, name, secret, { path: '/', secure: https })
        issued.set(request, secret)
      }
      return mac(secret)
    },
    /** This browser's landing secret (the handoff to the console is bound to it). */
    secret: cookie,
    valid(request: FastifyRequest, field: unknown): boolean {
      const secret = cookie(request)
      if (!secret || typeof field !== 'string' || field.length === 0) return false
      return safeEqual(mac(secret), field)
    },
  }
}
