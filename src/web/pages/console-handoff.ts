// The handoff from the landing page to the console (issue 36): the admin who has just
// created a workspace lands in the console signed in, without typing the address and the
// password again. The console keeps its tokens in the tab's sessionStorage (it is a client
// of the API like any other), so it needs a session of its own, which the landing page
// opens with the password it was just given and hands over in the URL's fragment:
//
//   - The fragment holds no token: a code sealed with the service's encryption key (AES-GCM,
//     its own AAD) around the console session's refresh token, the workspace, a deadline of
//     60 seconds and the hash of the browser's landing secret (the HttpOnly cookie of the
//     landing form's CSRF). A fragment is never sent to a server nor in a Referer; the
//     console removes it from the address and from history before anything else.
//   - POST /console/handoff opens it: only before the deadline and only in the browser that
//     holds that cookie, so a copied or logged URL signs no one in elsewhere. It answers the
//     refresh of that token: single use by the rotation rule (CONTRACT §4) — a second use
//     presents a spent refresh token, which ends that session.
// Anything wrong answers the same 400 `handoff_invalid` in the error envelope (CONTRACT §3),
// and the console shows its sign-in form.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { hashToken, safeEqual } from '../../lib/crypto.ts'
import { AppError } from '../../lib/errors.ts'
import { AuthServiceError, apiFor } from '../api.ts'

const AAD = 'console-handoff'
/** How long the code opens the console: one redirect and one page load, with room. */
export const HANDOFF_SECONDS = 60

interface Sealed {
  slug: string
  refreshToken: string
  exp: number
  browser: string
}

/** The fragment's code for `refreshToken`, opened only in the browser holding `browserSecret`. */
export function sealHandoff(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  slug: string,
  refreshToken: string,
  browserSecret: string,
): string {
  const sealed: Sealed = {
    slug,
    refreshToken,
    exp: deps.clock.now().getTime() + HANDOFF_SECONDS * 1000,
    browser: hashToken(browserSecret),
  }
  return deps.cipher.encrypt(JSON.stringify(sealed), AAD)
}

/** The code's contents, or undefined when it is not ours, has expired or is for another browser. */
function open(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  code: string,
  browserSecret: string | undefined,
): Sealed | undefined {
  if (!browserSecret) return undefined
  let sealed: Sealed
  try {
    sealed = JSON.parse(deps.cipher.decrypt(code, AAD)) as Sealed
  } catch {
    return undefined
  }
  if (typeof sealed.exp !== 'number' || sealed.exp <= deps.clock.now().getTime()) return undefined
  if (!safeEqual(sealed.browser, hashToken(browserSecret))) return undefined
  return sealed
}

const Body = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: { code: { type: 'string', minLength: 1, maxLength: 4096 } },
} as const

export function consoleHandoffRoute(
  app: FastifyInstance,
  deps: Pick<Deps, 'cipher' | 'clock'>,
  browserSecret: (request: FastifyRequest) => string | undefined,
): void {
  app.post<{ Body: { code: string } }>(
    '/console/handoff',
    { schema: { hide: true, body: Body } },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      const sealed = open(deps, request.body.code, browserSecret(request))
      // The console's script reads this answer: JSON in the error envelope (CONTRACT §3),
      // not the pages' error page that a thrown error on a page path would draw.
      const refused = () => reply.code(400).send(new AppError('handoff_invalid').toBody())
      if (!sealed) return refused()
      try {
        const session = await apiFor(app, request, sealed.slug).refreshSession({
          body: { refreshToken: sealed.refreshToken },
        })
        return reply.send({ tenant: sealed.slug, session })
      } catch (error) {
        if (error instanceof AuthServiceError && error.status < 500) return refused()
        throw error
      }
    },
  )
}
