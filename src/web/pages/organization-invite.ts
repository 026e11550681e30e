// Accepting an invitation to an organization (CONTRACT §18): a signed-in person joins with
// one button (the API checks the address is the invited one); a new address chooses a
// password here, which signs it up through auth/signup's rules, and joins. The page is a
// client of POST organization-invitations/accept, like the rest of the hosted pages.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pages } from '../context.ts'
import { html } from '../html.ts'
import { formText } from '../http.ts'
import { errorSummary, type FormErrors, field, form, hidden } from '../layout.ts'
import { formErrors } from '../messages.ts'
import { type Req, signedIn, statusOf } from './flow.ts'
import { incompleteLink } from './invite.ts'

const PATH = 'organization-invite'

async function invitationPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  token: string,
  state: { errors?: FormErrors; status?: number } = {},
) {
  const t = pages.t(request, reply)
  const session = await pages.session(request, reply)
  const tenant = request.tenant.name
  const body = session
    ? html`<h1>${t('orgInvite.heading')}</h1>
<p>${t('orgInvite.introSignedIn', { tenant })}</p>
${errorSummary(state.errors, t)}
${form(pages.url(request, PATH), pages.csrf(request, reply), hidden('token', token), t('orgInvite.submit'))}`
    : html`<h1>${t('orgInvite.heading')}</h1>
<p>${t('orgInvite.introNew', { tenant })}</p>
${errorSummary(state.errors, t)}
${form(
  pages.url(request, PATH),
  pages.csrf(request, reply),
  html`${hidden('token', token)}
${field({ name: 'password', label: t('orgInvite.password'), type: 'password', autocomplete: 'new-password', hint: t('password.hint'), errors: state.errors })}`,
  t('orgInvite.submitNew'),
)}
<p>${t('orgInvite.haveAccount')} <a href="${pages.url(request, 'sign-in')}">${t('orgInvite.signIn')}</a></p>`
  return pages.send(request, reply, t('orgInvite.title'), body, { status: state.status })
}

function joinedPage(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  organization: string,
  verify: boolean,
) {
  const t = pages.t(request, reply)
  const body = html`<h1>${t('orgInvite.joinedTitle', { organization })}</h1>
<p>${t('orgInvite.joinedText', { organization })}</p>
${verify ? html`<p>${t('orgInvite.verifyText')}</p>` : html``}
<p><a class="button primary" href="${pages.url(request, verify ? 'sign-in' : 'account')}">${t(verify ? 'orgInvite.signIn' : 'orgInvite.continue')}</a></p>`
  return pages.send(request, reply, t('orgInvite.joinedTitle', { organization }), body)
}

export function organizationInvitationRoutes(app: FastifyInstance, pages: Pages): void {
  app.get(`/${PATH}`, async (request: Req, reply) => {
    const token = typeof request.query.token === 'string' ? request.query.token : ''
    if (!token) return incompleteLink(pages, request, reply)
    return invitationPage(pages, request, reply, token)
  })

  app.post(`/${PATH}`, async (request: Req, reply) => {
    const token = formText(request.body, 'token')
    const session = await pages.session(request, reply)
    try {
      if (session) {
        const joined = await pages.api(request, session.accessToken).acceptOrganizationInvitation({
          body: { token },
        })
        return joinedPage(pages, request, reply, joined.membership.name, false)
      }
      const joined = await pages.api(request).acceptOrganizationInvitation({
        body: { token, password: formText(request.body, 'password') },
      })
      if (joined.session) return signedIn(pages, request, reply, joined.session, ['pwd'])
      return joinedPage(pages, request, reply, joined.membership.name, true)
    } catch (error) {
      return invitationPage(pages, request, reply, token, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })
}
