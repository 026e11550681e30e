// Signing in, signing up and accepting an invitation, as forms that work without
// JavaScript. Each step posts back to the service's JSON API through the SDK; a sign-in
// waiting for its second factor carries its first factor sealed in the form (session.ts,
// `sealPending`), never in a cookie or on the server.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AuthServiceError } from '../api.ts'
import type { Pages, TokenEnvelope } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { html, raw } from '../html.ts'
import { formText } from '../http.ts'
import { rememberIdpState } from '../idp.ts'
import {
  codeField,
  emailField,
  errorSummary,
  type FormErrors,
  field,
  form,
  hidden,
  notice,
} from '../layout.ts'
import { formErrors } from '../messages.ts'
import { openPending, sealPending } from '../session.ts'
import {
  codesAllowed,
  type Pending,
  passwordsAllowed,
  type Req,
  signedIn,
  statusOf,
  totpFigure,
} from './flow.ts'

// Other pages import the refusal from here.
export { expiredForm } from '../csrf.ts'
export { recoveryCodesPage, statusOf, totpFigure } from './flow.ts'

/** The sign-in flows, each POST behind the one CSRF check (csrf.ts). */
export function signInRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => signInFlows(app, pages))
}

function signInFlows(app: FastifyInstance, pages: Pages): void {
  const signInPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    state: { email?: string; errors?: FormErrors; note?: string; status?: number } = {},
  ) => {
    const tenant = request.tenant
    const csrf = pages.csrf(request, reply)
    const body = html`<h1>Sign in to ${tenant.name}</h1>
${notice(state.note)}
${errorSummary(state.errors)}
${
  passwordsAllowed(tenant) &&
  form(
    pages.url(request, 'sign-in'),
    csrf,
    html`${emailField(state.email, state.errors)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', errors: state.errors })}`,
    'Sign in',
  )
}
${
  tenant.idpOauthEnabled &&
  html`<p><a class="button" href="${pages.url(request, 'sign-in/idp')}">Sign in with your organisation's account</a></p>`
}
${
  tenant.passkeysEnabled &&
  html`<div class="passkey" data-passkey="sign-in" data-base="${pages.url(request).slice(0, -1)}" data-csrf="${csrf}" hidden>
<button type="button">Sign in with a passkey</button>
<p class="passkey-status" data-passkey-status role="status" aria-live="polite"></p>
</div>`
}
<nav class="alternatives" aria-label="Other ways to sign in">
<ul>
${codesAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-in/code')}">Email me a sign-in code</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'reset-password')}">Forgot your password?</a></li>`}
${passwordsAllowed(tenant) && html`<li><a href="${pages.url(request, 'sign-up')}">Create an account</a></li>`}
</ul>
</nav>`
    return pages.send(request, reply, 'Sign in', body, { status: state.status })
  }

  const secondFactorPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    pending: Pending,
    methods: string[],
    state: { errors?: FormErrors; note?: string; emailSent?: boolean } = {},
  ) => {
    const csrf = pages.csrf(request, reply)
    const sealed = sealPending(pages.ctx(request), request, reply, { ...pending, methods })
    const totp = methods.includes('totp')
    const email = methods.includes('email')
    const action = pages.url(
      request,
      pending.loginCode ? 'sign-in/code/second-factor' : 'sign-in/second-factor',
    )
    const body = html`<h1>Confirm it is you</h1>
${notice(state.note)}
${errorSummary(state.errors)}
${
  totp &&
  form(
    action,
    csrf,
    html`${hidden('pending', sealed)}${hidden('method', 'totp')}
${codeField('totpCode', 'Code from your authenticator app', state.errors)}`,
    'Continue',
  )
}
${
  totp &&
  html`<details${state.errors?.fields?.recoveryCode ? raw(' open') : ''}><summary>Use a recovery code instead</summary>
${form(action, csrf, html`${hidden('pending', sealed)}${hidden('method', 'recovery')}${field({ name: 'recoveryCode', label: 'Recovery code', autocomplete: 'off', errors: state.errors })}`, 'Continue with recovery code')}
</details>`
}
${
  email &&
  (state.emailSent
    ? form(
        action,
        csrf,
        html`${hidden('pending', sealed)}${hidden('method', 'email')}
${codeField('emailOtpCode', 'Code we emailed you', state.errors)}`,
        'Continue',
      )
    : form(
        action,
        csrf,
        html`${hidden('pending', sealed)}${hidden('method', 'send-email')}`,
        'Email me a code',
      ))
}
<p><a href="${pages.url(request, 'sign-in')}">Start again</a></p>`
    return pages.send(request, reply, 'Second step', body)
  }

  app.get('/', async (request, reply) => {
    const session = await pages.session(request, reply)
    return pages.redirect(request, reply, session ? 'account' : 'sign-in')
  })

  app.get('/sign-in', async (request: Req, reply) => {
    const idp = request.query.idp
    if (typeof idp !== 'string') return signInPage(request, reply)
    // Back from the identity provider with a refusal (web/idp.ts).
    const errors = { form: IDP_WORDS[idp] ?? IDP_WORDS.idp_error }
    return signInPage(request, reply, { errors, status: 401 })
  })

  app.get('/sign-in/idp', async (request, reply) => {
    try {
      const { authorizationUrl } = await pages.api(request).startIdpSignIn()
      const state = new URL(authorizationUrl).searchParams.get('state') ?? ''
      rememberIdpState(pages.deps, request, reply, request.tenant, state)
      return reply.redirect(authorizationUrl, 303)
    } catch (error) {
      return signInPage(request, reply, { errors: formErrors(error), status: statusOf(error) })
    }
  })

  app.post('/sign-in', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    const password = formText(request.body, 'password')
    try {
      const envelope = await pages.api(request).login({ body: { email, password } })
      return signedIn(pages, request, reply, envelope, ['pwd'])
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        const methods = (error.details?.methods as string[] | undefined) ?? ['totp']
        return secondFactorPage(request, reply, { email, password }, methods)
      }
      if (error instanceof AuthServiceError && error.reason === 'email_not_verified') {
        // The password was right: mail a code and go on to the verification page.
        await pages
          .api(request)
          .requestEmailVerification({ body: { email } })
          .catch(() => undefined)
        return pages.redirect(request, reply, `verify-email?email=${encodeURIComponent(email)}`)
      }
      return signInPage(request, reply, {
        email,
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/second-factor', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.password) {
      return signInPage(request, reply, { note: 'That took too long. Please sign in again.' })
    }
    const method = formText(request.body, 'method')
    const api = pages.api(request)
    const base = { email: pending.email, password: pending.password }
    const methods = pending.methods ?? ['totp', 'email']
    try {
      if (method === 'send-email') {
        await api.requestEmailOtp({ body: base })
        return secondFactorPage(request, reply, pending, methods, {
          emailSent: true,
          note: 'We emailed you a 6-digit code. It works for 10 minutes.',
        })
      }
      const second =
        method === 'recovery'
          ? { recoveryCode: formText(request.body, 'recoveryCode') }
          : method === 'email'
            ? { emailOtpCode: formText(request.body, 'emailOtpCode') }
            : { totpCode: formText(request.body, 'totpCode') }
      const envelope = await api.login({ body: { ...base, ...second } as never })
      return signedIn(pages, request, reply, envelope, ['pwd', 'otp', 'mfa'])
    } catch (error) {
      const target =
        method === 'recovery' ? 'recoveryCode' : method === 'email' ? 'emailOtpCode' : 'totpCode'
      const errors = formErrors(error, { totpCode: target, code: target })
      if (error instanceof AuthServiceError && error.reason === 'invalid_credentials') {
        return signInPage(request, reply, { email: pending.email, errors, status: 401 })
      }
      return secondFactorPage(request, reply, pending, methods, {
        errors,
        emailSent: method === 'email',
      })
    }
  })

  // --- Emailed sign-in codes -------------------------------------------------------------

  const codeRequestPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    state: { email?: string; errors?: FormErrors; status?: number } = {},
  ) => {
    const body = html`<h1>Sign in with an emailed code</h1>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'sign-in/code'),
  pages.csrf(request, reply),
  emailField(state.email, state.errors),
  'Email me a code',
)}
<p><a href="${pages.url(request, 'sign-in')}">Back to sign in</a></p>`
    return pages.send(request, reply, 'Emailed code', body, { status: state.status })
  }

  const codeEntryPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    email: string,
    state: { errors?: FormErrors; status?: number } = {},
  ) => {
    const sealed = sealPending(pages.ctx(request), request, reply, { email })
    const body = html`<h1>Check your email</h1>
${notice(`If ${email} has an account here, we sent it a 6-digit code. It works for 10 minutes.`)}
${errorSummary(state.errors)}
${form(
  pages.url(request, 'sign-in/code/verify'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('code', '6-digit code', state.errors)}`,
  'Sign in',
)}
<p><a href="${pages.url(request, 'sign-in/code')}">Send a new code</a></p>`
    return pages.send(request, reply, 'Enter your code', body, { status: state.status })
  }

  const enrolPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    pending: Pending,
    secret: string,
    errors?: FormErrors,
  ) => {
    const sealed = sealPending(pages.ctx(request), request, reply, { ...pending, secret })
    const body = html`<h1>Set up an authenticator app</h1>
<p>This workspace asks for a second factor. Scan the code with an authenticator app, or type the key, then enter the 6-digit code it shows.</p>
${await totpFigure(request.tenant.name, pending.email, secret)}
${errorSummary(errors)}
${form(
  pages.url(request, 'sign-in/code/enrol'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('totpCode', 'Code from the app', errors)}`,
  'Confirm',
)}`
    return pages.send(request, reply, 'Set up an authenticator', body)
  }

  app.get('/sign-in/code', async (request, reply) => {
    if (!codesAllowed(request.tenant)) return pages.redirect(request, reply, 'sign-in')
    return codeRequestPage(request, reply)
  })

  app.post('/sign-in/code', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    try {
      await pages.api(request).requestLoginCode({ body: { email } })
      return codeEntryPage(request, reply, email)
    } catch (error) {
      return codeRequestPage(request, reply, {
        email,
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/code/verify', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending) return codeRequestPage(request, reply)
    const code = formText(request.body, 'code')
    const api = pages.api(request)
    try {
      const envelope = await api.verifyLoginCode({ body: { email: pending.email, code } })
      return signedIn(pages, request, reply, envelope, ['otp'])
    } catch (error) {
      if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
        return secondFactorPage(request, reply, { email: pending.email, loginCode: code }, ['totp'])
      }
      if (error instanceof AuthServiceError && error.reason === 'mfa_not_enrolled') {
        try {
          const enrolment = await api.initialEnrollTotp({
            body: { email: pending.email, loginCode: code },
          })
          const pendingCode = { email: pending.email, loginCode: code }
          return enrolPage(request, reply, pendingCode, enrolment.secret)
        } catch (inner) {
          return codeEntryPage(request, reply, pending.email, {
            errors: formErrors(inner),
            status: statusOf(inner),
          })
        }
      }
      return codeEntryPage(request, reply, pending.email, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/code/second-factor', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode) return codeRequestPage(request, reply)
    const method = formText(request.body, 'method')
    const second =
      method === 'recovery'
        ? { recoveryCode: formText(request.body, 'recoveryCode') }
        : { totpCode: formText(request.body, 'totpCode') }
    try {
      const envelope = await pages.api(request).verifyLoginCode({
        body: { email: pending.email, code: pending.loginCode, ...second } as never,
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const target = method === 'recovery' ? 'recoveryCode' : 'totpCode'
      return secondFactorPage(request, reply, pending, ['totp'], {
        errors: formErrors(error, { totpCode: target }),
      })
    }
  })

  app.post('/sign-in/code/enrol', async (request: Req, reply) => {
    type Enrolling = Pending & { secret: string }
    const pending = openPending<Enrolling>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode || !pending.secret) return codeRequestPage(request, reply)
    try {
      const envelope = await pages.api(request).initialVerifyTotp({
        body: {
          email: pending.email,
          loginCode: pending.loginCode,
          totpCode: formText(request.body, 'totpCode'),
        },
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const { secret, ...rest } = pending
      return enrolPage(request, reply, rest, secret, formErrors(error, { code: 'totpCode' }))
    }
  })

  // --- Signing up ------------------------------------------------------------------------

  const signUpPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    state: { email?: string; errors?: FormErrors; status?: number } = {},
  ) => {
    const body = html`<h1>Create your account</h1>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'sign-up'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors)}
${field({ name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. A few unrelated words make a strong password.', errors: state.errors })}`,
  'Create account',
)}
<p>Already have an account? <a href="${pages.url(request, 'sign-in')}">Sign in</a></p>`
    return pages.send(request, reply, 'Sign up', body, { status: state.status })
  }

  app.get('/sign-up', async (request, reply) => {
    if (!passwordsAllowed(request.tenant)) return pages.redirect(request, reply, 'sign-in')
    return signUpPage(request, reply)
  })

  app.post('/sign-up', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    try {
      const answer = (await pages.api(request).signup({
        body: { email, password: formText(request.body, 'password') },
      })) as TokenEnvelope | { verificationRequired: true }
      if ('verificationRequired' in answer) {
        return pages.redirect(request, reply, `verify-email?email=${encodeURIComponent(email)}`)
      }
      return signedIn(pages, request, reply, answer, ['pwd'])
    } catch (error) {
      return signUpPage(request, reply, {
        email,
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  // --- Invitations -----------------------------------------------------------------------

  const invitePage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    state: { errors?: FormErrors; status?: number } = {},
  ) => {
    const body = html`<h1>Join ${request.tenant.name}</h1>
<p>You were invited to this workspace. Choose a password to accept.</p>
${errorSummary(state.errors)}
${form(
  pages.url(request, 'invite'),
  pages.csrf(request, reply),
  html`${hidden('token', token)}
${field({ name: 'password', label: 'Choose a password', type: 'password', autocomplete: 'new-password', hint: 'At least 12 characters. A few unrelated words make a strong password.', errors: state.errors })}`,
  'Accept invitation',
)}`
    return pages.send(request, reply, 'Accept invitation', body, { status: state.status })
  }

  app.get('/invite', async (request: Req, reply) => {
    const token = typeof request.query.token === 'string' ? request.query.token : ''
    if (!token) {
      return pages.send(
        request,
        reply,
        'Invitation',
        html`<h1>Invitation link incomplete</h1><p>Open the link from your invitation email again, or ask for a new invitation.</p>`,
        { status: 400 },
      )
    }
    return invitePage(request, reply, token)
  })

  app.post('/invite', async (request: Req, reply) => {
    const token = formText(request.body, 'token')
    try {
      const envelope = await pages.api(request).acceptInvite({
        body: { token, password: formText(request.body, 'password') },
      })
      return signedIn(pages, request, reply, envelope, ['pwd'])
    } catch (error) {
      return invitePage(request, reply, token, {
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
  })

  // --- Signing out -----------------------------------------------------------------------

  app.post('/sign-out', async (request: Req, reply) => {
    const session = await pages.session(request, reply)
    if (session) {
      await pages
        .api(request, session.accessToken)
        .logout({ body: { refreshToken: session.refreshToken } })
        .catch(() => undefined)
    }
    pages.endSession(request, reply)
    return signInPage(request, reply, { note: 'You are signed out.' })
  })
}

/** Why a sign-in through the identity provider came back refused. */
const IDP_WORDS: Record<string, string> = {
  idp_error: 'Your organisation’s sign-in was cancelled or refused.',
  idp_exchange_failed: 'Your organisation’s sign-in could not be completed. Please try again.',
  invalid_state: 'That sign-in took too long or was already used. Please try again.',
  email_taken: 'An account with your email address already exists here. Sign in with it instead.',
  account_suspended: 'This account is suspended. Ask an administrator of this workspace.',
  invalid_credentials: 'This account cannot sign in here.',
  mfa_required:
    'This workspace needs a second factor that your organisation’s sign-in did not give.',
  rate_limited: 'Too many attempts. Please try again in a minute.',
}
