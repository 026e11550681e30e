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
import { errorSummary, type FormErrors, field, form, page } from '../layout.ts'
import { beginSession } from '../session.ts'
import { consoleHandoffRoute, sealHandoff } from './console-handoff.ts'

const SERVICE = { tenant: { name: 'Tenant authentication service', slug: '' } }

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

  const send = (reply: FastifyReply, body: Html, status = 200) => {
    setPageHeaders(reply, { authorization: false })
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(page(SERVICE, 'Welcome', body).value)
  }

  // A body that cannot be read (wrong media type, malformed, too large) is answered as a
  // page, as the hosted pages do, not with the API's JSON envelope.
  app.setErrorHandler(
    async (error: Error & { statusCode?: number; status?: number }, request, reply) => {
      const given = error.statusCode ?? error.status
      const status = given && given >= 400 && given < 500 ? given : 500
      if (status === 500) request.log.error({ err: error }, 'landing page failed')
      const message =
        status === 500 ? 'Please try again in a moment.' : 'Go back, reload the page and try again.'
      return send(reply, html`<h1>This request could not be served</h1><p>${message}</p>`, status)
    },
  )
  const draw = (
    request: FastifyRequest,
    reply: FastifyReply,
    values?: Values,
    errors?: FormErrors,
    status = errors ? 400 : 200,
  ) => send(reply, landing(open() ? csrf.token(request, reply) : undefined, values, errors), status)

  // Pages are documents, not API operations: `hide` keeps them out of the OpenAPI document.
  app.get('/', { schema: { hide: true } }, async (request, reply) => draw(request, reply))

  app.post('/', { schema: { hide: true } }, async (request, reply) => {
    if (!open()) {
      return send(
        reply,
        html`<h1>Workspaces are created by the operator</h1><p>This service requires a token to create a workspace (TENANT_CREATION_TOKEN): ask its operator, or use the API with the token.</p><p><a href="/">Back</a></p>`,
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
        form: 'This form has expired. Please submit it again.',
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
      return draw(request, reply, values, errorsOf(error), error.status === 429 ? 429 : 400)
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
function errorsOf(error: AuthServiceError): FormErrors {
  if (error.status === 429) {
    const minutes = Math.max(1, Math.ceil((error.retryAfter ?? 60) / 60))
    return {
      form: `Too many attempts. Please try again in ${minutes} minute${minutes > 1 ? 's' : ''}.`,
    }
  }
  if (error.reason === 'slug_taken') {
    return { fields: { slug: 'This address is taken. Choose another one.' } }
  }
  if (error.reason === 'invalid_slug') {
    return { fields: { slug: 'This address is reserved. Choose another one.' } }
  }
  if (error.reason === 'password_too_weak') {
    return {
      fields: {
        password:
          'This password is too common, or the same as your email or the workspace name. Choose another one.',
      },
    }
  }
  const issues = (error.details?.issues ?? []) as Array<{ path?: string; message?: string }>
  const fields: Partial<Record<FieldName, string>> = {}
  for (const issue of issues) {
    const name = (Object.keys(FIELDS) as FieldName[]).find((n) => issue.path === FIELDS[n])
    if (!name || fields[name]) continue
    // A length rule says its number (the password's 12 characters, CONTRACT §4's schema).
    const shorter = /fewer than (\d+) characters/.exec(issue.message ?? '')
    fields[name] =
      shorter && Number(shorter[1]) > 1 ? `Use at least ${shorter[1]} characters.` : MESSAGES[name]
  }
  if (Object.keys(fields).length > 0) return { fields }
  return { form: error.message }
}

const MESSAGES: Record<FieldName, string> = {
  name: 'Enter a name for the workspace (at most 120 characters).',
  slug: 'Use 1 to 63 lowercase letters, digits and hyphens, not starting or ending with a hyphen.',
  email: 'Enter a valid email address.',
  password: 'Enter a password (at most 1024 characters).',
}

function landing(token: string | undefined, values?: Values, errors?: FormErrors): Html {
  return html`<h1>Welcome</h1>
<p>The tenant authentication service is running. Each workspace (a <em>tenant</em>) gets its own users, sign-in policy, MFA, passkeys, API keys, applications that sign in with OpenID Connect, and an audit log, through a JSON API and hosted sign-in pages.</p>
<ul class="links">
  <li><a href="/docs">API reference</a> (the OpenAPI document at <a href="/v1/openapi.json">/v1/openapi.json</a>)</li>
  <li><a href="/console/">Admin console</a></li>
</ul>
${
  token === undefined
    ? html`<p>Workspaces are created by the operator of this service (TENANT_CREATION_TOKEN is set).</p>`
    : html`<h2>Create a workspace</h2>
<p>You become the workspace’s first administrator: the email address and password below sign you in to its console.</p>
${errorSummary(errors)}
${form(
  '/',
  token,
  html`${field({ name: 'name', label: 'Workspace name', value: values?.name, autocomplete: 'organization', errors })}
${field({ name: 'slug', label: 'Workspace address', hint: 'Lowercase letters, digits and hyphens: its pages live at /t/{address}/.', value: values?.slug, autocomplete: 'off', errors })}
${field({ name: 'email', label: 'Your email address', type: 'email', value: values?.email, autocomplete: 'username', errors })}
${field({ name: 'password', label: 'Choose a password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. A few unrelated words make a strong password.', errors })}`,
  'Create workspace',
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
