// "Confirm it's you": the account page's step-up (CONTRACT §16). Adding a passkey, setting
// up an authenticator app, setting a first password, removing a passkey or a connected
// account and closing the account need a session that proved a sign-in factor in the last
// 10 minutes; when the API answers 401 `reauthentication_required`, the action answers this
// form instead of its result. The person proves a factor (POST me/reauthenticate through the
// SDK, as every page call), and the action they wanted goes on. The intent (what to do next)
// travels in hidden fields: it is the person's own request, and the API checks it again when
// it goes on (a first password travels sealed, first-password.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { MessageKey } from '../../i18n/index.ts'
import { AuthServiceError } from '../api.ts'
import type { Pages } from '../context.ts'
import { PAGE_SCRIPT } from '../csrf.ts'
import { type Html, html, raw } from '../html.ts'
import { type Form, formText } from '../http.ts'
import { codeField, errorSummary, type FormErrors, field, form, hidden, notice } from '../layout.ts'
import { formErrors } from '../messages.ts'
import type { PageSession } from '../session.ts'
import { statusOf } from './flow.ts'

/** What the person was doing when the API asked for a proof. */
export interface Intent {
  next:
    | 'totp'
    | 'passkey'
    | 'passkey-remove'
    | 'delete'
    | 'account'
    | 'connect'
    | 'identity-remove'
    | 'password-set'
  /** The passkey to remove, or the social connection to connect. */
  id?: string
  /** The name typed for a new passkey. */
  name?: string
  /** A first password typed, sealed for this browser (session.ts `sealPending`). */
  pending?: string
}

/** Carries an intent on, once the session has proved a factor. */
export type Proceed = (
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  intent: Intent,
) => Promise<FastifyReply>

/** Why the prompt asks, by intent: said above its forms. */
const WHY: Record<Intent['next'], MessageKey> = {
  totp: 'confirm.why.totp',
  passkey: 'confirm.why.passkey',
  'passkey-remove': 'confirm.why.passkeyRemove',
  delete: 'confirm.why.delete',
  account: 'confirm.why.account',
  connect: 'confirm.why.connect',
  'identity-remove': 'confirm.why.account',
  'password-set': 'confirm.why.passwordSet',
}

/** True for the API's answer that the action needs a recent proof of a sign-in factor. */
export function needsProof(error: unknown): boolean {
  return error instanceof AuthServiceError && error.reason === 'reauthentication_required'
}

/** The intent in a form or a query string; anything unknown goes back to the account page. */
export function intentOf(fields: Record<string, string> | undefined): Intent {
  const next = fields?.next
  const known =
    next !== undefined && Object.hasOwn(WHY, next) ? (next as Intent['next']) : 'account'
  const intent: Intent = { next: known }
  if (
    (known === 'passkey-remove' || known === 'connect' || known === 'identity-remove') &&
    fields?.id
  ) {
    intent.id = fields.id.slice(0, 64)
  }
  if (known === 'passkey' && fields?.name) intent.name = fields.name.slice(0, 100)
  if (known === 'password-set' && fields?.pending) intent.pending = fields.pending.slice(0, 4096)
  return intent
}

const intentFields = (intent: Intent): Html =>
  html`${hidden('next', intent.next)}${intent.id !== undefined ? hidden('id', intent.id) : ''}${intent.name !== undefined ? hidden('name', intent.name) : ''}${intent.pending !== undefined ? hidden('pending', intent.pending) : ''}`

type Req = FastifyRequest<{ Body: Form; Querystring: Record<string, string> }>
type JsonReq = FastifyRequest<{ Body: Record<string, unknown> }>

interface PromptState {
  errors?: FormErrors
  note?: string
  /** A sign-in code was mailed: its field is shown. */
  codeSent?: boolean
  /** The method whose form the errors belong to. */
  method?: string
  status?: number
}

/** The prompt, in place of the action's result. */
export async function askForProof(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  intent: Intent,
  state: PromptState = {},
): Promise<FastifyReply> {
  const { tenant } = request
  const api = pages.api(request, session.accessToken)
  const [me, keys] = await Promise.all([
    api.getMe(),
    tenant.passkeysEnabled ? api.listPasskeys() : Promise.resolve({ items: [] }),
  ])
  const csrf = pages.csrf(request, reply)
  const action = pages.url(request, 'account/confirm')
  // An account without a password (a social connection, SSO or a code made it) proves
  // another way: no password form it could not answer.
  const passwords = tenant.authPolicy !== 'PasswordlessOnly' && me.hasPassword
  const codes = tenant.authPolicy !== 'PasswordOnly'
  const passkeys = (keys as { items: unknown[] }).items.length > 0
  const fields = (method: string, body: Html | '') =>
    html`${hidden('method', method)}${intentFields(intent)}${body}`
  const t = pages.t(request, reply)
  const body = html`<h1>${t('confirm.title')}</h1>
<p>${t(WHY[intent.next])}</p>
${notice(state.note)}
${errorSummary(state.errors, t)}
<div class="proofs">
${
  passwords &&
  form(
    action,
    csrf,
    fields(
      'password',
      html`<input type="text" name="username" value="${me.email}" autocomplete="username" hidden>
${field({ name: 'password', label: t('confirm.password'), type: 'password', autocomplete: 'current-password', errors: state.errors })}`,
    ),
    t('confirm.withPassword'),
  )
}
${
  me.totpEnrolled &&
  html`<div>${form(
    action,
    csrf,
    fields('totp', codeField('totpCode', t('secondFactor.totpLabel'), state.errors)),
    t('confirm.withCode'),
  )}
<details${state.errors?.fields?.recoveryCode ? raw(' open') : ''}><summary>${t('secondFactor.useRecovery')}</summary>
${form(action, csrf, fields('recovery', field({ name: 'recoveryCode', label: t('secondFactor.recoveryLabel'), autocomplete: 'off', errors: state.errors })), t('confirm.withRecovery'))}
</details></div>`
}
${
  codes &&
  (state.codeSent
    ? form(
        action,
        csrf,
        fields('code', codeField('code', t('secondFactor.emailLabel'), state.errors)),
        t('confirm.withEmailedCode'),
      )
    : form(action, csrf, fields('send-code', ''), t('common.emailMeCode')))
}
${
  passkeys &&
  html`<div class="passkey" data-passkey="reauthenticate" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" data-cancelled="${t('passkey.cancelled')}" data-failed="${t('errors.reason.other')}" hidden>
<button type="button">${t('confirm.withPasskey')}</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
<form method="post" action="${pages.url(request, 'account/confirm/continue')}" data-continue>${hidden('_csrf', csrf)}${intentFields(intent)}</form>
</div>`
}
</div>
<p>${t('confirm.or')} <a href="${pages.url(request, 'sign-in')}">${t('confirm.signInAgain')}</a>${t('confirm.signInAgainAfter')}</p>
<p><a href="${pages.url(request, 'account')}">${t('common.cancel')}</a></p>`
  return pages.send(request, reply, t('confirm.title'), body, { status: state.status })
}

/** The API's proof failures, by the form's field they belong to. */
const FIELD_OF: Record<string, string> = {
  password: 'password',
  totp: 'totpCode',
  recovery: 'recoveryCode',
  code: 'code',
}

/** 401s that refuse the proof, not the session (those go to the pages' error handler). */
const PROOF_REFUSALS = new Set([
  'invalid_credentials',
  'invalid_mfa_code',
  'invalid_code',
  'password_login_disabled',
])

/**
 * "Confirm it's you", registered by the account page in its scope, where each POST is
 * behind the one CSRF check (csrf.ts).
 */
export function confirmFlows(app: FastifyInstance, pages: Pages, proceed: Proceed): void {
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await pages.session(request, reply)
    if (!session) pages.redirect(request, reply, 'sign-in')
    return session
  }

  /** The prompt on its own (the passkey script comes here when registration needs it). */
  app.get('/account/confirm', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    return askForProof(pages, request, reply, session, intentOf(request.query))
  })

  app.post('/account/confirm', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const intent = intentOf(request.body)
    const method = formText(request.body, 'method')
    const api = pages.api(request, session.accessToken)
    try {
      if (method === 'send-code') {
        const me = await api.getMe()
        await api.requestLoginCode({ body: { email: me.email } })
        return askForProof(pages, request, reply, session, intent, {
          codeSent: true,
          note: pages.t(request, reply)('secondFactor.emailSent'),
        })
      }
      const value = formText(request.body, FIELD_OF[method] ?? 'password')
      const proof =
        method === 'totp'
          ? { totpCode: value }
          : method === 'recovery'
            ? { recoveryCode: value }
            : method === 'code'
              ? { code: value }
              : { password: value }
      await api.reauthenticate({ body: proof as never })
    } catch (error) {
      // A session that ended meanwhile: the pages' error handler signs the browser out.
      if (
        error instanceof AuthServiceError &&
        error.status === 401 &&
        !PROOF_REFUSALS.has(error.reason ?? '')
      ) {
        throw error
      }
      const target = FIELD_OF[method] ?? 'password'
      const errors = formErrors(error, pages.t(request, reply), { totpCode: target, code: target })
      if (error instanceof AuthServiceError && error.reason === 'invalid_credentials') {
        errors.form = undefined
        errors.fields = { password: pages.t(request, reply)('confirm.wrongPassword') }
      }
      return askForProof(pages, request, reply, session, intent, {
        errors,
        codeSent: method === 'code',
        status: statusOf(error),
      })
    }
    return proceed(request, reply, session, intent)
  })

  /** After a passkey proved it (the script submits the prompt's hidden form). */
  app.post('/account/confirm/continue', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    return proceed(request, reply, session, intentOf(request.body))
  })

  // The passkey ceremony answers JSON to pages.js, as the other passkey routes do.
  const sessionForScript = async (request: JsonReq, reply: FastifyReply) => {
    const session = await pages.session(request, reply)
    if (!session) {
      reply.code(401).send({ error: pages.t(request, reply)('errors.reason.session_revoked') })
    }
    return session
  }
  const refuse = (request: JsonReq, reply: FastifyReply, error: unknown) => {
    const t = pages.t(request, reply)
    const errors = formErrors(error, t)
    const message = errors.form ?? Object.values(errors.fields ?? {})[0] ?? t('errors.reason.other')
    return reply.code(statusOf(error)).send({ error: message })
  }

  app.post('/account/confirm/passkey/options', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    const session = await sessionForScript(request, reply)
    if (!session) return reply
    try {
      return reply.send(await pages.api(request, session.accessToken).reauthenticationOptions())
    } catch (error) {
      return refuse(request, reply, error)
    }
  })

  app.post('/account/confirm/passkey', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    const session = await sessionForScript(request, reply)
    if (!session) return reply
    try {
      await pages.api(request, session.accessToken).reauthenticate({
        body: { response: request.body?.response as never },
      })
      return reply.send({ ok: true })
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'invalid_credentials') {
        const t = pages.t(request, reply)
        return reply.code(401).send({ error: t('passkey.notConfirmed') })
      }
      return refuse(request, reply, error)
    }
  })
}
