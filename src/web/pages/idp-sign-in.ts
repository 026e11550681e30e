// Signing in through the tenant's identity provider (OAuth, CONTRACT §7): this page hands
// the browser over with the flow's state remembered (web/idp.ts, which also brings it back
// signed in); a refusal comes back to the sign-in page, in the words below.
import type { FastifyInstance } from 'fastify'
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
        errors: formErrors(error),
        status: statusOf(error),
      })
    }
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
  hook_denied: 'This sign-in was refused by the workspace.',
}

/** The sign-in page's message for the identity provider's refusal `reason`. */
export function idpRefusal(reason: string): string {
  // The reason comes from the address: only the table's own keys, never Object's.
  return Object.hasOwn(IDP_WORDS, reason) ? IDP_WORDS[reason] : IDP_WORDS.idp_error
}
