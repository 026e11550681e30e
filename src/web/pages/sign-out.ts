// Signing out: the service's session ends and the page cookies with it.
import type { FastifyInstance } from 'fastify'
import type { Pages } from '../context.ts'
import type { Req } from './flow.ts'
import { signInPage } from './sign-in-page.ts'

export function signOutRoutes(app: FastifyInstance, pages: Pages): void {
  app.post('/sign-out', async (request: Req, reply) => {
    const session = await pages.session(request, reply)
    if (session) {
      await pages
        .api(request, session.accessToken)
        .logout({ body: { refreshToken: session.refreshToken } })
        .catch(() => undefined)
    }
    pages.endSession(request, reply)
    return signInPage(pages, request, reply, { note: pages.t(request, reply)('signOut.done') })
  })
}
