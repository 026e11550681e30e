// The account page's connected accounts (CONTRACT §19): the outside identities linked to the
// user (GET me/identities) with a Remove button each (DELETE me/identities/{id}: not the
// last way in), and a Connect button for each enabled social connection the user holds no
// identity at. Connect needs a session that proved a factor in the last 10 minutes (§16;
// else "Confirm it's you" first, confirm.ts); it then sends the browser to the provider with
// the session noted in the flow (federation/social/routes.ts), and the callback links.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../../lib/errors.ts'
import { beginFlow, enabledConnection } from '../../modules/federation/social/routes.ts'
import { requireRecentAuthentication } from '../../modules/stepup/recent.ts'
import type { Pages } from '../context.ts'
import { liveSignInOf } from '../live-sign-in.ts'
import { formErrors } from '../messages.ts'
import type { PageSession } from '../session.ts'
import { accountPage } from './account-page.ts'
import { askForProof, needsProof } from './confirm.ts'
import { statusOf } from './flow.ts'

/** Connect: the recent proof, then the provider (a page that goes on by itself: CSP). */
export async function connectIdentity(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  id: string,
): Promise<FastifyReply> {
  const signIn = await liveSignInOf(pages, request, reply)
  if (!signIn) return pages.redirect(request, reply, 'sign-in')
  const connection = await enabledConnection(pages.deps, request.tenant.id, id)
  const t = pages.t(request, reply)
  if (!connection) {
    return accountPage(pages, request, reply, session, {
      errors: { form: t('social.refusal.not_found') },
      status: 404,
    })
  }
  try {
    await requireRecentAuthentication(pages.deps, request.tenant.id, signIn)
  } catch (error) {
    if (error instanceof AppError && error.reason === 'reauthentication_required') {
      return askForProof(pages, request, reply, session, { next: 'connect', id })
    }
    throw error
  }
  const link = { userId: signIn.userId, sessionId: signIn.sessionId }
  const url = await beginFlow(pages.deps, request, reply, connection, { link })
  if (!url) {
    return accountPage(pages, request, reply, session, {
      errors: { form: t('social.refusal.unavailable') },
      status: 503,
    })
  }
  return pages.continueTo(request, reply, url)
}

/** Remove: refused (409) while it is the account's last way in. */
export async function removeIdentity(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  id: string,
): Promise<FastifyReply> {
  try {
    await pages.api(request, session.accessToken).removeMyIdentity({ path: { id } })
    return pages.redirect(request, reply, 'account?done=identity-removed')
  } catch (error) {
    if (needsProof(error)) {
      return askForProof(pages, request, reply, session, { next: 'identity-remove', id })
    }
    return accountPage(pages, request, reply, session, {
      errors: formErrors(error, pages.t(request, reply)),
      status: statusOf(error),
    })
  }
}
