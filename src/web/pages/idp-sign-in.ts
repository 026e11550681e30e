// Signing in through the tenant's identity provider (OAuth, CONTRACT §7): this page hands
// the browser over with the flow's state remembered (web/idp.ts, which also brings it back
// signed in); a refusal comes back to the sign-in page, in the words below.
import type { FastifyInstance } from 'fastify'
import type { MessageKey, Translate } from '../../i18n/index.ts'
import type { Pages } from '../context.ts'
import { rememberIdpState } from '../idp.ts'
import { formErrors } from '../messages.ts'
import { statusOf } from './flow.ts'
import { signInPage } from './sign-in-page.ts'

export function idpSignInRoutes(app: FastifyInstance, pages: Pages): void {
  app.get('/sign-in/idp', async (request, reply) => {
    try {
      const { authorizationUrl } = await pages.api(request).startIdpSignIn()
      const state = new URL(authorizationUrl).searchParams.get('state') ?? ''
      rememberIdpState(pages.deps, request, reply, request.tenant, state)
      return reply.redirect(authorizationUrl, 303)
    } catch (error) {
      return signInPage(pages, request, reply, {
        errors: formErrors(error, pages.t(request, reply)),
        status: statusOf(error),
      })
    }
  })
}

/** Why a sign-in through the identity provider came back refused (catalogue keys). */
const IDP_WORDS: Record<string, MessageKey> = {
  idp_error: 'idp.refusal.idp_error',
  idp_exchange_failed: 'idp.refusal.idp_exchange_failed',
  invalid_state: 'idp.refusal.invalid_state',
  email_taken: 'sso.refusal.email_taken',
  account_suspended: 'errors.reason.account_suspended',
  invalid_credentials: 'sso.refusal.invalid_credentials',
  mfa_required: 'idp.refusal.mfa_required',
  rate_limited: 'idp.refusal.rate_limited',
  hook_denied: 'idp.refusal.hook_denied',
}

/** The sign-in page's message for the identity provider's refusal `reason`, said by `t`. */
export function idpRefusal(reason: string, t: Translate): string {
  // The reason comes from the address: only the table's own keys, never Object's.
  return t(Object.hasOwn(IDP_WORDS, reason) ? IDP_WORDS[reason] : IDP_WORDS.idp_error)
}
