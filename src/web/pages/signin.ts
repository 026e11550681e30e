// The ways to sign in, one file per flow (as Ory's kratos-selfservice-ui-node has one per
// flow): the sign-in page (sign-in-page.ts) and a password (password.ts), the second step
// (second-factor.ts), a new password after a breached one (breached-password.ts), an emailed code (login-code.ts), the identity provider
// (idp-sign-in.ts), SSO connections (sso-sign-in.ts), signing up (sign-up.ts), an invitation (invite.ts) and signing out
// (sign-out.ts); passkeys (passkeys.ts) and getting back in (recovery.ts) register on their
// own. Every sign-in ends in flow.ts `signedIn`, which goes back to the OpenID interaction
// it serves; every POST is behind the one CSRF check (csrf.ts).
import type { FastifyInstance } from 'fastify'
import type { Pages } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { newPasswordRoutes } from './breached-password.ts'
import { idpSignInRoutes } from './idp-sign-in.ts'
import { invitationRoutes } from './invite.ts'
import { loginCodeRoutes } from './login-code.ts'
import { organizationInvitationRoutes } from './organization-invite.ts'
import { passwordSignInRoutes } from './password.ts'
import { secondFactorRoutes } from './second-factor.ts'
import { signOutRoutes } from './sign-out.ts'
import { signUpRoutes } from './sign-up.ts'
import { socialSignInRoutes } from './social-sign-in.ts'
import { ssoSignInRoutes } from './sso-sign-in.ts'

// Other pages import these from here.
export { expiredForm } from '../csrf.ts'
export { recoveryCodesPage, statusOf, totpFigure } from './flow.ts'

/** The sign-in flows, each POST behind the one CSRF check (csrf.ts). */
export function signInRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => {
    passwordSignInRoutes(app, pages)
    secondFactorRoutes(app, pages)
    newPasswordRoutes(app, pages)
    loginCodeRoutes(app, pages)
    idpSignInRoutes(app, pages)
    ssoSignInRoutes(app, pages)
    socialSignInRoutes(app, pages)
    signUpRoutes(app, pages)
    invitationRoutes(app, pages)
    organizationInvitationRoutes(app, pages)
    signOutRoutes(app, pages)
  })
}
