// What an SSO sign-in needs of the hosted pages: web/ draws the refusal page, sets the pages'
// headers and opens the hosted-pages session, and app.ts hands these to the module (Deps'
// `ssoPages`), so federation draws no UI and never imports web/ (issue 36, Structure; the
// OpenID provider is handed its pages the same way, oidc/pages.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Tenant } from '../tenants/tenant.ts'

type TenantRef = Pick<Tenant, 'id' | 'slug'>

/** The session an SSO sign-in opens on the hosted pages. */
export interface SsoPageSession {
  accessToken: string
  refreshToken: string
  expiresAt: number
  amr: string[]
  /** The OpenID authorization (§11) the sign-in serves, if any. */
  interaction?: string
}

export interface SsoPages {
  /**
   * The hosted pages' headers (CSP, framing, caching, opener policy) on an answer of the
   * flow; `authorization`: the sign-in serves an OpenID authorization (web/http.ts).
   */
  headers(reply: FastifyReply, kind: { authorization: boolean }): void
  /**
   * The refusal page: words for the person (the pages' catalogue says each reason in the
   * request's language; `words`, a hook's own message, is shown as it is) and the reason's
   * code, in the tenant's brand; `kind` names the way (an SSO or a social connection).
   */
  refusal(
    request: FastifyRequest,
    tenant: Tenant,
    reason: string,
    words?: string,
    kind?: 'sso' | 'social',
  ): Promise<string>
  /**
   * Opens the hosted-pages session in this browser and answers the path the flow goes on
   * to: the authorization it serves, else the account page.
   */
  signedIn(
    request: FastifyRequest,
    reply: FastifyReply,
    tenant: TenantRef,
    session: SsoPageSession,
  ): string
  /** The account page, with the notice `done` (an identity connected from it). */
  accountPath(slug: string, done: string): string
  /** The page that asks for the second factor after the IdP answered (pending-mfa.ts). */
  secondFactorPath(slug: string): string
  /** Whether `uid` has the shape of oidc-provider's interaction uids. */
  isInteractionUid(uid: unknown): uid is string
}
