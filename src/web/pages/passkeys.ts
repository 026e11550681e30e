// Passkeys on the hosted pages. The ceremonies need the browser's WebAuthn API, so these
// routes answer JSON to pages.js (same origin, with the form's CSRF field in the body);
// removing a passkey is a plain form. Without JavaScript the passkey buttons stay hidden
// and every other way to sign in still works.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Pages, TokenEnvelope } from '../context.ts'
import { csrfChecked, PAGE_SCRIPT } from '../csrf.ts'
import { formErrors } from '../messages.ts'
import type { PageSession } from '../session.ts'
import { askForProof, needsProof } from './confirm.ts'

type JsonReq = FastifyRequest<{ Body: Record<string, unknown> }>

/**
 * A refusal as the script shows it: one sentence, and the status. When the API wants a
 * recent proof first, `confirm` is where the script sends the person ("Confirm it's you").
 */
function refuse(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  confirm?: string,
) {
  const t = pages.t(request, reply)
  if (confirm && needsProof(error)) {
    return reply.code(401).send({ error: t('passkey.confirmFirst'), confirm })
  }
  const errors = formErrors(error, t)
  const message = errors.form ?? Object.values(errors.fields ?? {})[0] ?? t('errors.reason.other')
  const status = (error as { status?: number }).status ?? 500
  return reply.code(status).send({ error: message })
}

/** The passkey routes, each behind the one CSRF check (csrf.ts). */
export function passkeyRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => passkeyFlows(app, pages))
}

function passkeyFlows(app: FastifyInstance, pages: Pages): void {
  app.post('/sign-in/passkey/options', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    const email = typeof request.body?.email === 'string' ? request.body.email.trim() : ''
    try {
      const options = await pages
        .api(request)
        .passkeySignInOptions({ body: email ? { email } : {} })
      return reply.send(options)
    } catch (error) {
      return refuse(pages, request, reply, error)
    }
  })

  app.post('/sign-in/passkey', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    try {
      const envelope = await pages.api(request).passkeySignIn({
        body: { response: request.body?.response as never },
      })
      // The script goes on: to the OpenID interaction the sign-in serves, else the account.
      const interaction = pages.startSession(request, reply, envelope as TokenEnvelope, ['hwk'])
      return reply.send({ redirect: interaction ?? pages.url(request, 'account') })
    } catch (error) {
      return refuse(pages, request, reply, error)
    }
  })

  app.post('/account/passkeys/options', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    const session = await pages.session(request, reply)
    if (!session) return reply.code(401).send({ error: 'Your session has ended. Sign in again.' })
    try {
      return reply.send(await pages.api(request, session.accessToken).passkeyRegistrationOptions())
    } catch (error) {
      return refuse(
        pages,
        request,
        reply,
        error,
        pages.url(request, 'account/confirm?next=passkey'),
      )
    }
  })

  app.post('/account/passkeys', PAGE_SCRIPT, async (request: JsonReq, reply) => {
    const session = await pages.session(request, reply)
    if (!session) return reply.code(401).send({ error: 'Your session has ended. Sign in again.' })
    const name = typeof request.body?.name === 'string' ? request.body.name.trim() : ''
    try {
      await pages.api(request, session.accessToken).registerPasskey({
        body: { response: request.body?.response as never, ...(name ? { name } : {}) },
      })
      return reply.send({ redirect: pages.url(request, 'account?done=passkey') })
    } catch (error) {
      return refuse(
        pages,
        request,
        reply,
        error,
        pages.url(request, 'account/confirm?next=passkey'),
      )
    }
  })

  app.post<{ Params: { id: string } }>('/account/passkeys/:id/delete', async (request, reply) => {
    const session = await pages.session(request, reply)
    if (!session) return pages.redirect(request, reply, 'sign-in')
    return removePasskey(pages, request, reply, session, request.params.id)
  })
}

/** Removes one of the user's passkeys, asking "Confirm it's you" first when the API wants it. */
export async function removePasskey(
  pages: Pages,
  request: FastifyRequest,
  reply: FastifyReply,
  session: PageSession,
  id: string,
): Promise<FastifyReply> {
  try {
    await pages.api(request, session.accessToken).deletePasskey({ path: { id } })
  } catch (error) {
    if (needsProof(error)) {
      return askForProof(pages, request, reply, session, { next: 'passkey-remove', id })
    }
    // Already gone, or not this user's: the account page shows what there is.
  }
  return pages.redirect(request, reply, 'account?done=passkey-removed')
}
