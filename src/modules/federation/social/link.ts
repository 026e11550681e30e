// Connecting another identity to a signed-in account (CONTRACT §19): the account page's
// "Connect" starts a flow that carries the session (after §16's recent authentication), and
// its callback ends here instead of in a sign-in. The session must still be live and its user
// Active; an identity already linked to another user is refused and nothing moves; one the
// user already holds is a no-op. Audit `IdentityLinked`.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../../deps.ts'
import { normalizeEmail } from '../../../lib/email.ts'
import type { Actor } from '../../audit/recorder.ts'
import { liveSessionOf } from '../../introspection/service.ts'
import { findIdentity, type IdentityKey, insertIdentity } from '../identities.ts'
import { type Flow, type FlowScope, forgetFlow, refuseFlow } from '../sso-signin.ts'
import type { Profile } from './presets.ts'
import type { SocialConnection } from './queries.ts'
import { socialVia } from './source.ts'

type LinkDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'ssoPages'>

export async function linkThroughFlow(
  deps: LinkDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  connection: SocialConnection,
  link: NonNullable<Flow['link']>,
  profile: Profile,
): Promise<FastifyReply> {
  const { tenant } = request
  const scope: FlowScope = { kind: 'social', id: connection.id }
  const failVia = { ...socialVia(connection), intent: 'link' }
  const now = deps.clock.now()
  const live = await liveSessionOf(deps, tenant.id, link.sessionId, link.userId, now)
  if (live?.status !== 'Active') {
    return refuseFlow(deps, request, reply, scope, failVia, 'session_revoked', { status: 401 })
  }
  const key: IdentityKey = {
    tenantId: tenant.id,
    kind: 'social',
    source: connection.id,
    subject: profile.subject,
  }
  const email = profile.email ? normalizeEmail(profile.email) : null
  const outcome = await deps.db.transaction(async (tx) => {
    const existing = await findIdentity(tx, key)
    if (existing) return existing.userId === link.userId ? 'held' : 'elsewhere'
    if (!(await insertIdentity(tx, { ...key, userId: link.userId, email, createdAt: now }))) {
      return 'elsewhere'
    }
    const who: Actor = { ...request.actor, type: 'user', id: link.userId }
    await deps.audit.record(tx, tenant.id, who, [
      {
        action: 'IdentityLinked',
        userId: link.userId,
        email,
        metadata: {
          connectionId: connection.id,
          provider: connection.provider,
          subject: profile.subject,
        },
      },
    ])
    return 'linked'
  })
  if (outcome === 'elsewhere') {
    request.log.warn({ connectionId: connection.id }, 'identity linked to another account')
    return refuseFlow(deps, request, reply, scope, failVia, 'identity_linked_elsewhere', {
      status: 409,
      email,
    })
  }
  forgetFlow(deps, reply, tenant.slug, scope)
  deps.ssoPages.headers(reply, { authorization: false })
  return reply
    .code(303)
    .header('location', deps.ssoPages.accountPath(tenant.slug, 'identity-linked'))
    .type('text/plain; charset=utf-8')
    .send('')
}
