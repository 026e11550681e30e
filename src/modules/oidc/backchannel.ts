// Back-Channel Logout 1.0 (CONTRACT §11, Logout): when a service session ends, for any
// reason (the hosted pages' sign-out, logout-all, one session ended, password change or
// reset, suspension, deletion, a reused refresh token), every provider session signed in
// from it ends too, and each application that user signed in to through it, and that has a
// `backchannelLogoutUri`, receives a logout token (a signed JWT with `iss`, `aud`, `sub`,
// `sid`, `events`, `jti`, no `nonce`), POSTed by oidc-provider's own Client#backchannelLogout.
//
// The SessionService tells of ended sessions after their transaction committed; this runs
// in the background from there: a slow or failing application never delays or fails the
// user's request, and its failure is logged. RP-initiated logout sends its own logout
// tokens (oidc-provider's end_session) before the hosted session is ended
// (web/pages/oidc-logout.ts), whose provider session is by then gone, so none goes twice.
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/client.ts'
import type { EndedSessions } from '../sessions/service.ts'
import { findTenantById } from '../tenants/tenant.ts'
import type { ProviderPool } from './pool.ts'
import { takeProviderSessions } from './queries.ts'

export interface LogoutClient {
  clientId: string
  backchannelLogoutUri?: string
  backchannelLogout(sub: string, sid: string): Promise<void>
}

interface Authorizations {
  [clientId: string]: { sid?: string } | undefined
}

export interface BackchannelDeps {
  db: Db
  pool: ProviderPool
  log: FastifyBaseLogger
}

/** The listener SessionService#onSessionsEnded takes. */
export function backchannelOnSessionsEnded(deps: BackchannelDeps) {
  return (ended: EndedSessions[]): void => {
    for (const one of ended) {
      logoutEverywhere(deps, one).catch((err) =>
        deps.log.warn({ err, tenantId: one.tenantId }, 'back-channel logout failed'),
      )
    }
  }
}

async function logoutEverywhere(deps: BackchannelDeps, ended: EndedSessions): Promise<void> {
  const { tenantId, userId, sessionIds } = ended
  const sessions = await takeProviderSessions(deps.db, tenantId, userId, sessionIds)
  if (sessions.length === 0) return
  const found = await findTenantById(deps.db, tenantId)
  // A deleted tenant has no issuer left to speak for it.
  if (!found) return
  const provider = deps.pool.provider(found.tenant) as unknown as {
    Client: { find(id: string): Promise<LogoutClient | undefined> }
  }
  const sends: Promise<void>[] = []
  for (const session of sessions) {
    const authorizations = (session.authorizations ?? {}) as Authorizations
    for (const [clientId, authorization] of Object.entries(authorizations)) {
      const sid = authorization?.sid
      if (!sid) continue
      sends.push(
        sendLogout(deps, provider.Client, tenantId, clientId, userId, sid).catch((err) =>
          deps.log.warn({ err, tenantId, clientId }, 'back-channel logout not delivered'),
        ),
      )
    }
  }
  await Promise.all(sends)
}

async function sendLogout(
  deps: BackchannelDeps,
  clients: { find(id: string): Promise<LogoutClient | undefined> },
  tenantId: string,
  clientId: string,
  sub: string,
  sid: string,
): Promise<void> {
  // The application as it is now: deleted since, or its URI removed, means nobody to tell.
  const client = await clients.find(clientId)
  if (!client?.backchannelLogoutUri) return
  await client.backchannelLogout(sub, sid)
  deps.log.info({ tenantId, clientId }, 'back-channel logout delivered')
}

/** Logs the failures of the logout tokens oidc-provider sends itself (RP-initiated logout). */
export function logBackchannelErrors(
  provider: { on(event: string, listener: (...args: unknown[]) => void): void },
  log: FastifyBaseLogger,
  tenantId: string,
): void {
  provider.on('backchannel.error', (_ctx, err, client) => {
    const clientId = (client as LogoutClient | undefined)?.clientId
    log.warn({ err, tenantId, clientId }, 'back-channel logout not delivered')
  })
}
