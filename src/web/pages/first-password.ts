// The account page's "Set a password", for an account without one (a social connection, SSO,
// the identity provider or an emailed code made it): POST me/password through the SDK. It
// adds a way to sign in, so an old proof asks "Confirm it's you" first (confirm.ts, CONTRACT
// §16); the password typed waits sealed in the prompt's forms (session.ts `sealPending`:
// this browser, this tenant, five minutes, never stored), and once the proof is given it is
// set without being asked again.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Pages } from '../context.ts'
import { formErrors } from '../messages.ts'
import { openPending, type PageSession, sealPending } from '../session.ts'
import { accountPage } from './account-page.ts'
import { askForProof, needsProof } from './confirm.ts'
import { statusOf } from './flow.ts'

interface Pending {
  newPassword?: string
  until?: number
}

export async function setFirstPassword(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  newPassword: string,
): Promise<FastifyReply> {
  try {
    await pages.api(request, session.accessToken).setPassword({ body: { newPassword } })
    return pages.redirect(request, reply, 'account?done=password-set')
  } catch (error) {
    if (needsProof(error)) {
      const pending = sealPending<Pending>(pages.ctx(request), request, reply, { newPassword })
      return askForProof(pages, request, reply, session, { next: 'password-set', pending })
    }
    const errors = formErrors(error, pages.t(request, reply), { password: 'newPassword' })
    return accountPage(pages, request, reply, session, { errors, status: statusOf(error) })
  }
}

/** After "Confirm it's you": the sealed password, or the form again once it is too late. */
export async function setSealedPassword(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  sealed: string | undefined,
): Promise<FastifyReply> {
  const pending = openPending<Pending>(pages.ctx(request), request, sealed)
  if (!pending?.newPassword) {
    const t = pages.t(request, reply)
    return accountPage(pages, request, reply, session, {
      note: t('account.note.confirmedPassword'),
    })
  }
  return setFirstPassword(pages, request, reply, session, pending.newPassword)
}
