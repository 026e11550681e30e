// Getting back in (CONTRACT §9), one file per flow: resetting a forgotten password
// (reset-password.ts) and verifying an email address (verify-email.ts), with mailed codes.
import type { FastifyInstance } from 'fastify'
import type { Pages } from '../context.ts'
import { csrfChecked } from '../csrf.ts'
import { resetPasswordRoutes } from './reset-password.ts'
import { verifyEmailRoutes } from './verify-email.ts'

/** Password reset and email verification, each POST behind the one CSRF check (csrf.ts). */
export function recoveryRoutes(app: FastifyInstance, pages: Pages): void {
  csrfChecked(app, pages, (app) => {
    resetPasswordRoutes(app, pages)
    verifyEmailRoutes(app, pages)
  })
}
