// Signing in with a code mailed to the address (CONTRACT §5), its second step when the
// account has a second factor, and setting one up when the workspace asks for it.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isEmail } from '../../lib/email.ts'
import { AppError, fail } from '../../lib/errors.ts'
import { checkCaptcha } from '../../modules/captcha/service.ts'
import {
  askedBy,
  linkStillOpen,
  MAGIC_LINK_TTL_SECONDS,
  openMagicLink,
  requestMagicLink,
} from '../../modules/passwordless/magic-link.ts'
import { AuthServiceError } from '../api.ts'
import { captchaTokenOf, captchaWidget, pageCaptcha } from '../captcha.ts'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import {
  codeField,
  emailField,
  errorSummary,
  type FormErrors,
  form,
  hidden,
  notice,
} from '../layout.ts'
import { formErrors } from '../messages.ts'
import {
  browserCookie,
  openPending,
  pendingInteractionClient,
  rememberedDeviceOf,
  sealPending,
} from '../session.ts'
import {
  codesAllowed,
  type Pending,
  type Req,
  rememberDeviceBox,
  rememberDeviceTicked,
  signedIn,
  statusOf,
  totpFigure,
} from './flow.ts'
import { secondFactorPage } from './second-factor.ts'
import { connectionForEmail, ssoStartPath } from './sso-sign-in.ts'

/** What the tenant's emailed sign-in sends (CONTRACT §20, passwordlessMethod). */
const methodOf = (request: FastifyRequest) =>
  request.tenant.passwordlessMethod as 'code' | 'link' | 'both'

const REQUEST_HEADING = {
  code: 'loginCode.heading',
  link: 'loginCode.linkHeading',
  both: 'loginCode.choiceHeading',
} as const

async function codeRequestPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  state: { email?: string; errors?: FormErrors; status?: number } = {},
) {
  const t = pages.t(request, reply)
  const method = methodOf(request)
  // With `both` the first button (the one Enter presses) asks for a code, the other a link.
  const link =
    method === 'both'
      ? html`<button type="submit" name="method" value="link">${t('common.emailMeLink')}</button>`
      : undefined
  const body = html`<h1>${t(REQUEST_HEADING[method])}</h1>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-in/code'),
  pages.csrf(request, reply),
  html`${emailField(state.email, state.errors, t)}
${captchaWidget(request, 'login_code', t)}`,
  t(method === 'link' ? 'common.emailMeLink' : 'common.emailMeCode'),
  { more: link },
)}
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('loginCode.title'), body, {
    status: state.status,
    captcha: pageCaptcha(request, 'login_code'),
  })
}

/** A link that is not (or no longer) one: used, replaced, past its 15 minutes, or altered. */
async function linkRefusedPage(pages: Pages, request: FastifyRequest, reply: FastifyReply) {
  const t = pages.t(request, reply)
  const again = codesAllowed(request.tenant)
    ? html`<p><a class="button primary" href="${pages.url(request, 'sign-in/code')}">${t('magicLink.again')}</a></p>`
    : ''
  const body = html`<h1>${t('magicLink.invalidTitle')}</h1>
<p>${t('magicLink.invalidText')}</p>
${again}
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('magicLink.invalidTitle'), body, { status: 400 })
}

/** A link whose code was right but whose sign-in was refused: why, as the code form says it. */
async function linkFailedPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  errors: FormErrors,
  status: number,
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('magicLink.title')}</h1>
${errorSummary(errors, t)}
<p><a href="${pages.url(request, 'sign-in')}">${t('common.backToSignIn')}</a></p>`
  return pages.send(request, reply, t('magicLink.title'), body, { status })
}

/** A link opened in a browser that did not ask for it: the code, and nobody signed in. */
async function linkElsewherePage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  code: string,
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('magicLink.elsewhereHeading')}</h1>
<p>${t('magicLink.elsewhereText')}</p>
<p class="code-shown"><strong>${code}</strong></p>
<p>${t('magicLink.elsewhereNote')}</p>`
  return pages.send(request, reply, t('magicLink.title'), body)
}

/** An error of a call the pages made in process, as formErrors meets the API's. */
function asServiceError(error: unknown): unknown {
  if (!(error instanceof AppError)) return error
  const { code, message, details } = error.toBody()
  return new AuthServiceError({
    status: error.status,
    code,
    message,
    details,
    retryAfter: error.retryAfter,
  })
}

/**
 * Asks for a link (CONTRACT §20) with what the API's request-login-code route checks: the
 * address's format, the per-IP budget of login codes and the CAPTCHA, in that order.
 */
async function askForLink(pages: Pages, request: Req, email: string) {
  const secret = browserCookie(pages.ctx(request), request)
  try {
    // The form's CSRF check needed the browser's secret: without one nothing is bound.
    if (!isEmail(email) || !secret) {
      fail('validation', {
        details: { issues: [{ path: 'body.email', message: 'must be an email address' }] },
      })
    }
    await pages.deps.limits.hit('codeRequestsPerIp', `login:${request.clientIp}`)
    const captchaToken = captchaTokenOf(request, 'login_code', request.body)
    // The API's CaptchaToken is at most 8192 characters: a longer one is no answer.
    if (captchaToken && captchaToken.length > 8192) fail('captcha_invalid')
    await checkCaptcha(
      pages.deps,
      request.log,
      request.tenant,
      'login_code',
      captchaToken,
      request.clientIp,
    )
    // As the API's calls of the pages carry them: their language and the application signed in to.
    const actor = {
      ...request.actor,
      language: pages.locale(request),
      servedClientId: pendingInteractionClient(pages.ctx(request), request),
    }
    await requestMagicLink(pages.deps, request.tenant, email, secret, actor)
  } catch (error) {
    throw asServiceError(error)
  }
}

/**
 * Where the emailed code is typed: the code mailed, or (`link`) the code a magic link shows
 * when it is opened on another device. A code's form lives five minutes, a link's as long as
 * the link (15 minutes).
 */
async function codeEntryPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: { email: string; link?: boolean; until?: number },
  state: { errors?: FormErrors; status?: number } = {},
) {
  const { email, link } = pending
  const until = link ? (pending.until ?? Date.now() + MAGIC_LINK_TTL_SECONDS * 1000) : undefined
  const sealed = sealPending(pages.ctx(request), request, reply, { email, link, until })
  const t = pages.t(request, reply)
  const body = html`<h1>${t('loginCode.checkHeading')}</h1>
${link ? html`${notice(t('magicLink.sent', { email }))}<p>${t('magicLink.elsewhere')}</p>` : notice(t('reset.codeSent', { email }))}
${errorSummary(state.errors, t)}
${form(
  pages.url(request, 'sign-in/code/verify'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('code', t('loginCode.codeLabel'), state.errors)}`,
  t('signIn.submit'),
)}
<p><a href="${pages.url(request, 'sign-in/code')}">${t(link ? 'magicLink.sendNew' : 'common.sendNewCode')}</a></p>`
  const title = t(link ? 'magicLink.title' : 'loginCode.enterTitle')
  return pages.send(request, reply, title, body, { status: state.status })
}

async function enrolPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  pending: Pending,
  secret: string,
  errors?: FormErrors,
) {
  const sealed = sealPending(pages.ctx(request), request, reply, { ...pending, secret })
  const t = pages.t(request, reply)
  const body = html`<h1>${t('enrol.heading')}</h1>
<p>${t('enrol.intro')}</p>
${await totpFigure(request.tenant.name, pending.email, secret, t)}
${errorSummary(errors, t)}
${form(
  pages.url(request, 'sign-in/code/enrol'),
  pages.csrf(request, reply),
  html`${hidden('pending', sealed)}${codeField('totpCode', t('enrol.codeLabel'), errors)}${rememberDeviceBox(request, t, 'remember-enrol')}`,
  t('enrol.submit'),
)}`
  return pages.send(request, reply, t('enrol.title'), body)
}

/**
 * Signs in with an emailed code (the form's, or the one a magic link carries) through the
 * API's verify-login-code, on to the second factor or its enrolment when the tenant asks
 * for one; `refused` draws the page for a code the service refused.
 */
async function signInWithCode(
  pages: Pages,
  request: Req,
  reply: FastifyReply,
  email: string,
  code: string,
  refused: (errors: FormErrors, status: number, error: unknown) => Promise<FastifyReply>,
) {
  const api = pages.api(request)
  try {
    // CONTRACT §21: a remembered device skips the second factor.
    const deviceToken = rememberedDeviceOf(pages.ctx(request), request)
    const envelope = await api.verifyLoginCode({
      body: { email, code, ...(deviceToken ? { deviceToken } : {}) },
    })
    return signedIn(pages, request, reply, envelope, ['otp'])
  } catch (error) {
    if (error instanceof AuthServiceError && error.reason === 'mfa_required') {
      return secondFactorPage(pages, request, reply, { email, loginCode: code }, ['totp'])
    }
    if (error instanceof AuthServiceError && error.reason === 'mfa_not_enrolled') {
      try {
        const enrolment = await api.initialEnrollTotp({ body: { email, loginCode: code } })
        return enrolPage(pages, request, reply, { email, loginCode: code }, enrolment.secret)
      } catch (inner) {
        return refused(formErrors(inner, pages.t(request, reply)), statusOf(inner), inner)
      }
    }
    return refused(formErrors(error, pages.t(request, reply)), statusOf(error), error)
  }
}

export function loginCodeRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/sign-in/code', async (request, reply) => {
    if (!codesAllowed(request.tenant)) return pages.redirect(request, reply, 'sign-in')
    return codeRequestPage(pages, request, reply)
  })

  app.post('/sign-in/code', async (request: Req, reply) => {
    const email = formText(request.body, 'email')
    // CONTRACT §12: an address of an enforced SSO domain gets no code; it signs in there.
    const enforced = await connectionForEmail(pages, request.tenant.id, email)
    if (enforced?.enforce)
      return pages.continueTo(request, reply, pages.url(request, ssoStartPath(enforced.id)))
    const method = methodOf(request)
    const link =
      method === 'link' || (method === 'both' && formText(request.body, 'method') === 'link')
    try {
      if (link) {
        await askForLink(pages, request, email)
        return codeEntryPage(pages, request, reply, { email, link: true })
      }
      const captchaToken = captchaTokenOf(request, 'login_code', request.body)
      await pages.api(request).requestLoginCode({ body: { email, captchaToken } })
      return codeEntryPage(pages, request, reply, { email })
    } catch (error) {
      return codeRequestPage(pages, request, reply, {
        email,
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })

  app.post('/sign-in/code/verify', async (request: Req, reply) => {
    type Waiting = Pending & { link?: boolean; until?: number }
    const pending = openPending<Waiting>(pages.ctx(request), request, request.body?.pending)
    if (!pending) return codeRequestPage(pages, request, reply)
    const code = formText(request.body, 'code')
    return signInWithCode(pages, request, reply, pending.email, code, (errors, status) =>
      codeEntryPage(pages, request, reply, pending, { errors, status }),
    )
  })

  // CONTRACT §20: the link of a magic-link mail. In the browser that asked it signs in with
  // the code it carries; anywhere else it shows that code and signs nobody in. A link used,
  // replaced by a newer code, past its 15 minutes or altered is refused alike, before the
  // code is tried (so an old link opened never counts as a wrong guess of the newer code).
  app.get('/magic-link', async (request: Req, reply) => {
    // A HEAD, or a browser's prefetch of the link, signs nobody in and spends nothing: only
    // the person's own navigation does.
    const purpose = `${request.headers['sec-purpose'] ?? ''} ${request.headers.purpose ?? ''}`
    if (request.method === 'HEAD' || /prefetch|prerender/i.test(purpose)) {
      return reply.code(204).header('cache-control', 'no-store').send()
    }
    const link = openMagicLink(pages.deps, request.tenant.id, request.query.token)
    if (!link || !codesAllowed(request.tenant)) return linkRefusedPage(pages, request, reply)
    if (!(await linkStillOpen(pages.deps, request.tenant, link)))
      return linkRefusedPage(pages, request, reply)
    if (!askedBy(link, browserCookie(pages.ctx(request), request)))
      return linkElsewherePage(pages, request, reply, link.code)
    // A code the service no longer takes is the link's end; any other refusal (a hook's
    // deny, a hold on the account, an SSO domain) is said as the code form says it.
    return signInWithCode(pages, request, reply, link.email, link.code, (errors, status, error) =>
      error instanceof AuthServiceError && error.reason === 'invalid_code'
        ? linkRefusedPage(pages, request, reply)
        : linkFailedPage(pages, request, reply, errors, status),
    )
  })

  app.post('/sign-in/code/second-factor', async (request: Req, reply) => {
    const pending = openPending<Pending>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode) return codeRequestPage(pages, request, reply)
    const method = formText(request.body, 'method')
    const second =
      method === 'recovery'
        ? { recoveryCode: formText(request.body, 'recoveryCode') }
        : { totpCode: formText(request.body, 'totpCode') }
    try {
      const remember = rememberDeviceTicked(request.body) ? { rememberDevice: true } : {}
      const envelope = await pages.api(request).verifyLoginCode({
        body: { email: pending.email, code: pending.loginCode, ...second, ...remember } as never,
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const target = method === 'recovery' ? 'recoveryCode' : 'totpCode'
      return secondFactorPage(pages, request, reply, pending, ['totp'], {
        errors: formErrors(error, pages.t(request, reply), { totpCode: target }),
      })
    }
  })

  app.post('/sign-in/code/enrol', async (request: Req, reply) => {
    type Enrolling = Pending & { secret: string }
    const pending = openPending<Enrolling>(pages.ctx(request), request, request.body?.pending)
    if (!pending?.loginCode || !pending.secret) return codeRequestPage(pages, request, reply)
    try {
      const envelope = await pages.api(request).initialVerifyTotp({
        body: {
          email: pending.email,
          loginCode: pending.loginCode,
          totpCode: formText(request.body, 'totpCode'),
          ...(rememberDeviceTicked(request.body) ? { rememberDevice: true } : {}),
        },
      })
      return signedIn(pages, request, reply, envelope, ['otp', 'mfa'])
    } catch (error) {
      const { secret, ...rest } = pending
      return enrolPage(
        pages,
        request,
        reply,
        rest,
        secret,
        formErrors(error, pages.t(request, reply), { code: 'totpCode' }),
      )
    }
  })
}
