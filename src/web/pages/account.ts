// The signed-in user's account page (drawn by account-page.ts) and its forms: profile,
// password (or a first one, first-password.ts), authenticator app and recovery codes, live
// sessions, passkeys, personal data, closing the account. Each section is a form that posts
// to its own path and comes back with a notice (303), so a reload never repeats an action.
// Those that change how the account signs in may first ask "Confirm it's you" (confirm.ts,
// CONTRACT §16).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pages } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { html } from '../html.ts'
import { type Form, formText } from '../http.ts'
import { codeField, errorSummary, type FormErrors, form, notice } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { dropDeviceToken, type PageSession } from '../session.ts'
import { accountPage, type Me, NOTES } from './account-page.ts'
import { askForProof, confirmFlows, type Intent, needsProof, type Proceed } from './confirm.ts'
import { setFirstPassword, setSealedPassword } from './first-password.ts'
import { connectIdentity, removeIdentity } from './identities.ts'
import { removePasskey } from './passkeys.ts'
import { recoveryCodesPage, statusOf, totpFigure } from './signin.ts'

type Req = FastifyRequest<{ Body: Form; Querystring: Record<string, string> }>

/** The account page and its forms, each POST behind the one CSRF check (csrf.ts). */
export function accountRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => accountForms(app, pages))
}

function accountForms(app: FastifyInstance, pages: Pages): void {
  /** The session, or a redirect to the sign-in page. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await pages.session(request, reply)
    if (!session) pages.redirect(request, reply, 'sign-in')
    return session
  }

  app.get('/account', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    // Back from "Confirm it's you" to add a passkey: the ceremony starts by itself.
    if (request.query.continue === 'passkey') {
      return accountPage(pages, request, reply, session, {
        note: pages.t(request, reply)('account.note.confirmedPasskey'),
        addPasskey: (request.query.name ?? '').slice(0, 100),
      })
    }
    const done = request.query.done ?? ''
    const note = Object.hasOwn(NOTES, done) ? pages.t(request, reply)(NOTES[done]) : undefined
    return accountPage(pages, request, reply, session, { note })
  })

  app.post('/account/password', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages.api(request, session.accessToken).changePassword({
        body: {
          currentPassword: formText(request.body, 'currentPassword'),
          newPassword: formText(request.body, 'newPassword'),
        },
      })
      return pages.redirect(request, reply, 'account?done=password')
    } catch (error) {
      const t = pages.t(request, reply)
      const errors = formErrors(error, t, { password: 'newPassword' })
      if (errors.form === t('errors.reason.invalid_credentials')) {
        errors.form = undefined
        errors.fields = { currentPassword: t('account.currentPasswordWrong') }
      }
      return accountPage(pages, request, reply, session, { errors, status: statusOf(error) })
    }
  })

  // A first password, for an account without one (first-password.ts).
  app.post('/account/password/set', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const newPassword = formText(request.body, 'newPassword')
    return setFirstPassword(pages, request, reply, session, newPassword)
  })

  const enrolPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    email: string,
    secret: string,
    errors?: FormErrors,
  ) => {
    const t = pages.t(request, reply)
    const body = html`<h1>${t('enrol.heading')}</h1>
<p>${t('enrol.introAccount')}</p>
${await totpFigure(request.tenant.name, email, secret, t)}
${errorSummary(errors, t)}
${form(
  pages.url(request, 'account/totp/verify'),
  pages.csrf(request, reply),
  html`<input type="hidden" name="secret" value="${secret}">
${codeField('code', t('enrol.codeLabel'), errors)}`,
  t('enrol.submit'),
)}
<p><a href="${pages.url(request, 'account')}">${t('common.cancel')}</a></p>`
    return pages.send(request, reply, t('enrol.title'), body)
  }

  const startTotp = async (request: FastifyRequest, reply: FastifyReply, session: PageSession) => {
    try {
      const api = pages.api(request, session.accessToken)
      const enrolment = await api.enrollTotp()
      const me = (await api.getMe()) as Me
      return enrolPage(request, reply, me.email, enrolment.secret)
    } catch (error) {
      if (needsProof(error)) return askForProof(pages, request, reply, session, { next: 'totp' })
      return accountPage(pages, request, reply, session, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  }

  app.post('/account/totp', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    return startTotp(request, reply, session)
  })

  app.post('/account/totp/verify', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const api = pages.api(request, session.accessToken)
    try {
      const answer = (await api.verifyTotp({
        body: { code: formText(request.body, 'code') },
      })) as { recoveryCodes?: string[] }
      if (answer.recoveryCodes)
        return recoveryCodesPage(pages, request, reply, answer.recoveryCodes)
      return pages.redirect(request, reply, 'account?done=totp')
    } catch (error) {
      // The key comes back as the user posted it (their own; escaped, and drawn as a QR code
      // only when it is a base32 key).
      const me = (await api.getMe()) as Me
      const errors = formErrors(error, pages.t(request, reply), { totpCode: 'code' })
      return enrolPage(request, reply, me.email, formText(request.body, 'secret'), errors)
    }
  })

  app.post(
    '/account/sessions/:id/end',
    async (request: FastifyRequest<{ Params: { id: string }; Body: Form }>, reply) => {
      const session = await signedIn(request, reply)
      if (!session) return reply
      const api = pages.api(request, session.accessToken)
      const live = await api.listMySessions({ query: { limit: 50 } })
      const current = live.items.find((s) => s.current)?.id === request.params.id
      try {
        await api.endMySession({ path: { id: request.params.id } })
      } catch {
        // Already ended, or not this user's: the page shows what is live.
      }
      if (current) {
        pages.endSession(request, reply)
        return pages.redirect(request, reply, 'sign-in')
      }
      return pages.redirect(request, reply, 'account?done=session-ended')
    },
  )

  app.post('/account/recovery-codes', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      const answer = await pages.api(request, session.accessToken).regenerateRecoveryCodes({
        body: { totpCode: formText(request.body, 'regenerateTotp') },
      })
      return recoveryCodesPage(pages, request, reply, answer.recoveryCodes)
    } catch (error) {
      const errors = formErrors(error, pages.t(request, reply), { totpCode: 'regenerateTotp' })
      return accountPage(pages, request, reply, session, { errors, status: statusOf(error) })
    }
  })

  // CONTRACT §21: "forget remembered devices": every device of the user, this browser's
  // cookie too.
  app.post('/account/forget-devices', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    await pages.api(request, session.accessToken).forgetRememberedDevices()
    dropDeviceToken(pages.ctx(request), reply)
    return pages.redirect(request, reply, 'account?done=devices-forgotten')
  })

  app.post('/account/export', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      const data = await pages.api(request, session.accessToken).exportPersonalData()
      return reply
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="my-data.json"')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(data, null, 2))
    } catch (error) {
      return accountPage(pages, request, reply, session, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })

  // The user's language (CONTRACT §20): PATCH me, then the page session holds it so the
  // pages speak it at once; a `lang` cookie chosen before would win over it, so it follows.
  app.post('/account/locale', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const chosen = formText(request.body, 'locale')
    try {
      const me = await pages.api(request, session.accessToken).updateMe({
        body: { locale: chosen === '' ? null : (chosen as 'en') },
      })
      pages.rememberUserLocale(request, reply, session, me.locale ?? undefined)
      return pages.redirect(request, reply, 'account?done=language')
    } catch (error) {
      return accountPage(pages, request, reply, session, {
        errors: formErrors(error, pages.t(request, reply), { locale: 'locale' }),
        status: statusOf(error),
      })
    }
  })

  app.post('/account/verify', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages.api(request, session.accessToken).requestEmailVerification({ body: {} })
    } catch (error) {
      return accountPage(pages, request, reply, session, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
    return verifyOwnPage(request, reply)
  })

  const verifyOwnPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    errors?: FormErrors,
  ) => {
    const t = pages.t(request, reply)
    const body = html`<h1>${t('verify.heading')}</h1>
${notice(t('secondFactor.emailSent'))}
${errorSummary(errors, t)}
${form(
  pages.url(request, 'account/verify/confirm'),
  pages.csrf(request, reply),
  codeField('code', t('code.mailedLabel'), errors),
  t('verify.submit'),
)}
<p><a href="${pages.url(request, 'account')}">${t('account.back')}</a></p>`
    return pages.send(request, reply, t('verify.title'), body, { status: errors ? 401 : 200 })
  }

  app.post('/account/verify/confirm', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    try {
      await pages
        .api(request, session.accessToken)
        .verifyEmail({ body: { code: formText(request.body, 'code') } })
      return pages.redirect(request, reply, 'account?done=verified')
    } catch (error) {
      return verifyOwnPage(request, reply, formErrors(error, pages.t(request, reply)))
    }
  })

  app.post('/account/delete', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    if (formText(request.body, 'confirm') !== 'DELETE') {
      return accountPage(pages, request, reply, session, {
        errors: {
          fields: {
            confirm: pages.t(request, reply)('account.deleteTypeWord', { word: 'DELETE' }),
          },
        },
        status: 400,
      })
    }
    return deleteAccount(request, reply, session)
  })

  const deleteAccount = async (
    request: FastifyRequest,
    reply: FastifyReply,
    session: PageSession,
  ) => {
    try {
      await pages.api(request, session.accessToken).deleteMe()
    } catch (error) {
      if (needsProof(error)) return askForProof(pages, request, reply, session, { next: 'delete' })
      return accountPage(pages, request, reply, session, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
    pages.endSession(request, reply)
    return pages.send(
      request,
      reply,
      pages.t(request, reply)('account.deletedTitle'),
      html`<h1>${pages.t(request, reply)('account.deletedHeading')}</h1><p>${pages.t(request, reply)('account.deletedText')}</p>`,
    )
  }

  app.post('/account/connect/:id', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const { id } = request.params as { id: string }
    return connectIdentity(pages, request, reply, session, id)
  })

  app.post('/account/identities/:id/remove', async (request: Req, reply) => {
    const session = await signedIn(request, reply)
    if (!session) return reply
    const { id } = request.params as { id: string }
    return removeIdentity(pages, request, reply, session, id)
  })

  /** What goes on once "Confirm it's you" is answered (confirm.ts). */
  const proceed: Proceed = async (request, reply, session, intent: Intent) => {
    switch (intent.next) {
      case 'totp':
        return startTotp(request, reply, session)
      case 'delete':
        return deleteAccount(request, reply, session)
      case 'passkey-remove':
        return removePasskey(pages, request, reply, session, intent.id ?? '')
      case 'connect':
        return connectIdentity(pages, request, reply, session, intent.id ?? '')
      case 'identity-remove':
        return removeIdentity(pages, request, reply, session, intent.id ?? '')
      case 'password-set':
        return setSealedPassword(pages, request, reply, session, intent.pending)
      case 'passkey': {
        const name = intent.name ? `&name=${encodeURIComponent(intent.name)}` : ''
        return pages.redirect(request, reply, `account?continue=passkey${name}#passkeys-h`)
      }
      default:
        return pages.redirect(request, reply, 'account?done=confirmed')
    }
  }
  confirmFlows(app, pages, proceed)
}
