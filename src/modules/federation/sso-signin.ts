// The end of every SSO sign-in (CONTRACT §12), whatever the protocol: the OIDC callback
// (federation/oidc-signin.ts) and the SAML Assertion Consumer Service hand the identity
// they checked to `finishSsoSignIn`, which applies the identity rules through the one
// linking core (federation/link.ts, signInWithSource), opens the hosted-pages session and sends
// the browser on: back to the OpenID authorization request (§11) the sign-in serves, else to
// the account page. A refusal is an error page (4xx) and a UserLoginFailed row with
// `metadata.reason`.
// The hosted page `/t/{slug}/sso/{id}` starts a sign-in: an OIDC one itself, a SAML one by
// sending the browser on to `/v1/{slug}/sso/{id}/saml/start`.
//
// The pages' part (the refusal page, their headers, the hosted-pages session) is handed in
// from web/ (pages.ts, Deps' `ssoPages`): this module draws no UI.
// The authorization request a sign-in serves is noted when the browser leaves for the IdP
// (`rememberFlow`, called by the hosted page that starts SSO, which reads it from the
// pages' cookies): a sealed cookie scoped to `/v1/{slug}/sso/{id}`, so it comes back to both the
// OIDC callback and the SAML ACS (SameSite=None on https: the ACS is a cross-site POST).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { clearCookie, readCookies, setCookie } from '../../lib/cookies.ts'
import { isEmail, normalizeEmail } from '../../lib/email.ts'
import { AppError } from '../../lib/errors.ts'
import { deviceTokenOf, hostCookie } from '../../lib/host-cookie.ts'
import { servedApplication } from '../../lib/served-client.ts'
import { joinThroughConnection } from '../organizations/jit.ts'
import { baseRole } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { emailDomain } from './domains.ts'
import { findIdentity, insertIdentity, updateIdentityEmail } from './identities.ts'
import { type IdentitySource, signInWithSource, wasAudited } from './link.ts'
import { PENDING_TTL, pendingCookie, storePendingSignIn } from './pending-mfa.ts'
import { holdConnection, type SsoConnection } from './queries.ts'
import { applyRoleMapping } from './role-mapping.ts'

/** What a protocol checked about the person: the identity is keyed by (connection, subject). */
export interface SsoAssertion {
  /** The OIDC `sub`, or the SAML NameID. */
  subject: string
  /**
   * The address the IdP asserts (OIDC: the `email` claim; SAML: the NameID when its format
   * is emailAddress, else the first of the attributes `email`, `mail`, or
   * `http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress`), or null.
   */
  email: string | null
  /** Whether the IdP reported multi-factor authentication (OIDC `amr`, SAML AuthnContext). */
  mfa: boolean
  /**
   * What the connection's roleMapping reads (CONTRACT §17): the OIDC claims (ID token, and
   * userinfo where it was read), or the SAML attributes (each a list of values).
   */
  claims?: Record<string, unknown>
}

export type SsoSignInDeps = Pick<
  Deps,
  'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'sessions' | 'ssoPages'
>

const FLOW_TTL = 600

/**
 * Which browser flow a cookie belongs to: a sign-in through an SSO connection (§12) or a
 * social connection (§19), each under its own routes `/v1/{slug}/{kind}/{id}`.
 */
export interface FlowScope {
  kind: 'sso' | 'social'
  id: string
}

const flowPath = (slug: string, scope: FlowScope) => `/v1/${slug}/${scope.kind}/${scope.id}`
const flowAad = (tenantId: string, scope: FlowScope) => `${scope.kind}-flow:${tenantId}:${scope.id}`
/** Over https `__Host-ta_{kind}_flow_{slug}_{connection}` at `/` (CONTRACT §16), else at the flow's path. */
const flowCookie = (deps: Pick<Deps, 'config'>, slug: string, scope: FlowScope) =>
  hostCookie(
    deps.config.publicUrl,
    `ta_${scope.kind}_flow`,
    [slug, scope.id],
    flowPath(slug, scope),
  )
const flowCookieOptions = (deps: Pick<Deps, 'config'>, slug: string, scope: FlowScope) => {
  const { name: _name, ...where } = flowCookie(deps, slug, scope)
  return { ...where, sameSite: 'None' as const }
}

export interface Flow {
  interaction?: string
  clientId?: string
  /** What binds the IdP's answer to this browser (the OIDC state), when set. */
  binding?: string
  /** Where the browser goes once signed in (a hosted page of the tenant), when set. */
  returnTo?: string
  /**
   * A signed-in session connecting another identity to its account (CONTRACT §19, the
   * account page's "Connect"): the callback links instead of signing in.
   */
  link?: { userId: string; sessionId: string }
}

/**
 * Notes, for ten minutes and this connection's routes only, the authorization request (§11)
 * the browser is signing in for, as the hosted page that starts the sign-in read it from the
 * pages' cookies (`pending`), before it sends the browser to the IdP.
 */
export function rememberFlow(
  deps: Pick<Deps, 'cipher' | 'config'>,
  reply: FastifyReply,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  scope: FlowScope,
  pending: Omit<Flow, 'binding'>,
  binding?: string,
): void {
  const flow = {
    interaction: pending.interaction,
    clientId: pending.clientId,
    returnTo: pending.returnTo,
    link: pending.link,
    binding,
    until: Date.now() + FLOW_TTL * 1000,
  }
  const sealed = deps.cipher.encrypt(JSON.stringify(flow), flowAad(tenant.id, scope))
  setCookie(reply, flowCookie(deps, tenant.slug, scope).name, sealed, {
    ...flowCookieOptions(deps, tenant.slug, scope),
    maxAge: FLOW_TTL,
  })
}

/** Ends the flow: its cookie goes. */
export function forgetFlow(
  deps: Pick<Deps, 'config'>,
  reply: FastifyReply,
  slug: string,
  scope: FlowScope,
): void {
  clearCookie(reply, flowCookie(deps, slug, scope).name, flowCookieOptions(deps, slug, scope))
}

/** The flow this browser's cookie carries for the connection (empty when none is live). */
export function readFlow(
  deps: Pick<Deps, 'cipher' | 'config' | 'ssoPages'>,
  request: FastifyRequest,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  scope: FlowScope,
): Flow {
  const sealed = readCookies(request)[flowCookie(deps, tenant.slug, scope).name]
  if (!sealed) return {}
  try {
    const value = JSON.parse(deps.cipher.decrypt(sealed, flowAad(tenant.id, scope)))
    if (typeof value?.until !== 'number' || value.until < Date.now()) return {}
    return {
      interaction: deps.ssoPages.isInteractionUid(value.interaction)
        ? value.interaction
        : undefined,
      clientId: typeof value.clientId === 'string' ? value.clientId : undefined,
      binding: typeof value.binding === 'string' ? value.binding : undefined,
      returnTo: typeof value.returnTo === 'string' ? value.returnTo : undefined,
      link:
        typeof value.link?.userId === 'string' && typeof value.link?.sessionId === 'string'
          ? { userId: value.link.userId, sessionId: value.link.sessionId }
          : undefined,
    }
  } catch {
    return {}
  }
}

/**
 * Why an SSO sign-in was refused, in the API's English (a refusal's `message`); the hosted
 * refusal page says each in the request's language (web/sso-pages.ts).
 */
const WORDS: Record<string, string> = {
  sso_user_not_provisioned:
    'Your organisation’s sign-in worked, but this workspace has no account for you. Ask an administrator of this workspace.',
  connection_disabled: 'This single sign-on connection is turned off. Ask an administrator.',
  account_suspended: 'This account is suspended. Ask an administrator of this workspace.',
  invalid_credentials: 'This account cannot sign in here.',
  mfa_required:
    'This workspace needs a second factor that your organisation’s sign-in did not report.',
  email_taken: 'An account with your email address already exists here. Sign in with it instead.',
  unconfirmed_account:
    'An account with your email address exists here, but its address was never confirmed. Confirm it from the email you were sent, or ask an administrator, then sign in with single sign-on again.',
}

/**
 * Answers an SSO sign-in that failed with the error page (status `status`, 4xx) and, unless
 * `audited`, a UserLoginFailed row naming the connection and `reason` (CONTRACT §12: every
 * refusal is audited with metadata.reason). For the SAML ACS's own refusals too.
 */
export function refuseSsoSignIn(
  deps: Pick<Deps, 'audit' | 'cipher' | 'config' | 'db' | 'ssoPages'>,
  request: FastifyRequest,
  reply: FastifyReply,
  connection: Pick<SsoConnection, 'tenantId' | 'id'>,
  reason: string,
  options: RefusalOptions = {},
): Promise<FastifyReply> {
  const failVia = { method: 'sso', connectionId: connection.id }
  return refuseFlow(
    deps,
    request,
    reply,
    { kind: 'sso', id: connection.id },
    failVia,
    reason,
    options,
  )
}

export type RefusalOptions = {
  status?: number
  email?: string | null
  audited?: boolean
  words?: string
}

/**
 * The refusal page of a browser sign-in flow (`scope`), and unless `audited` its
 * UserLoginFailed row: `failVia` names the way (method, connection), with `reason`.
 */
export async function refuseFlow(
  deps: Pick<Deps, 'audit' | 'cipher' | 'config' | 'db' | 'ssoPages'>,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: FlowScope,
  failVia: Record<string, unknown>,
  reason: string,
  options: RefusalOptions = {},
): Promise<FastifyReply> {
  const { tenant } = request
  const email = options.email ?? null
  if (!options.audited) {
    await deps.audit.record(deps.db, tenant.id, request.actor, [
      { action: 'UserLoginFailed', email, metadata: { ...failVia, reason, email } },
    ])
  }
  const body = await deps.ssoPages.refusal(request, tenant, reason, options.words, scope.kind)
  // Its "Back to sign-in" goes on with the authorization the sign-in serves, if any.
  const { interaction } = readFlow(deps, request, tenant, scope)
  deps.ssoPages.headers(reply, { authorization: interaction !== undefined })
  return reply
    .code(options.status ?? 403)
    .type('text/html; charset=utf-8')
    .send(body)
}

/** The connection's rules of §12 as a source for federation/link.ts. */
function connectionSource(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  tenant: Tenant,
  connection: SsoConnection,
  assertion: SsoAssertion,
  given: string | null,
  flow: Flow,
): IdentitySource {
  const { clientId } = flow
  const email = given && normalizeEmail(given)
  const key = {
    tenantId: tenant.id,
    kind: 'sso' as const,
    source: connection.id,
    subject: assertion.subject,
  }
  const via = {
    method: 'sso',
    connectionId: connection.id,
    subject: assertion.subject,
    ...servedApplication(clientId),
  }
  const notProvisioned = {
    reason: 'sso_user_not_provisioned' as const,
    message: WORDS.sso_user_not_provisioned,
    userId: null,
  }
  return {
    email,
    givenEmail: given,
    // The connection owns the address's domain: its IdP speaks for the address.
    emailVerified: true,
    via,
    method: 'sso',
    precheck: () => {
      const domain = email ? emailDomain(email) : undefined
      return domain && connection.domains.includes(domain) ? undefined : notProvisioned
    },
    findLink: (tx) => findIdentity(tx, key),
    // A connection deleted meanwhile links nobody: its identities were deleted with it, and
    // one linked now would outlive it (the refusal is the linker's for a race).
    insertLink: async (tx, userId, now) =>
      (await holdConnection(tx, tenant.id, connection.id)) &&
      insertIdentity(tx, { ...key, userId, email, createdAt: now }),
    updateLinkEmail: (tx, value) => updateIdentityEmail(tx, key, value),
    // CONTRACT §12: the tenant's user with that email (the connection owns its domain), but
    // only one whose owner proved the address here: signup does not, so whoever registered
    // a colleague's address first would otherwise keep their password and sessions in the
    // colleague's account once it is linked. Confirming the address (or an admin removing
    // the account) lets the SSO sign-in through.
    mayLink: (user) =>
      user.emailVerified
        ? undefined
        : { ...notProvisioned, message: WORDS.unconfirmed_account, userId: user.id },
    newUser: () =>
      connection.jitProvisioning ? { role: baseRole(connection.defaultRole) } : notProvisioned,
    multiFactor: connection.mfaSatisfied || assertion.mfa,
    noMfaMessage: WORDS.mfa_required,
    // A user with TOTP gives it on the next page (pending-mfa.ts).
    deferSecondFactor: (tx, user) =>
      storePendingSignIn(deps, tx, tenant.id, {
        userId: user.id,
        connectionId: connection.id,
        amr: ['fed'],
        via,
        failVia: { method: 'sso', connectionId: connection.id },
        ...(flow.interaction ? { interaction: flow.interaction } : {}),
      }),
    // CONTRACT §17's roleMapping, then §18's organization: both in the sign-in's
    // transaction, their audit rows recorded with it (a pending second factor included:
    // the membership gives nothing until a session opens, and tokens need one).
    accepted: async (tx, user, now) => [
      ...(await applyRoleMapping(tx, tenant.id, connection, user, assertion.claims ?? {}, now)),
      ...(await joinThroughConnection(tx, tenant.id, connection, user, now)),
    ],
    linkedEntries: (userId) => [
      {
        action: 'SsoIdentityLinked',
        userId,
        email,
        metadata: { connectionId: connection.id, subject: assertion.subject },
      },
    ],
    noEmail: () => {
      throw new AppError('sso_user_not_provisioned')
    },
  }
}

/**
 * Signs in the person `assertion` describes through `connection` (of the request's tenant),
 * and answers the browser: a 303 to the authorization request the sign-in serves (noted by
 * `rememberFlow`) or to the account page, with the hosted-pages session set; or the error
 * page. The rules (CONTRACT §12): a disabled connection signs nobody in; the email must lie
 * in the connection's domains (else 403 sso_user_not_provisioned); the identity's existing
 * link, else the tenant's user with that email, else a new Active user with `defaultRole`
 * and a verified email when `jitProvisioning` (else 403 sso_user_not_provisioned); a
 * suspended or deleted user is refused; the tenant's mfaPolicy must be met by the IdP's
 * `mfa` unless the connection is `mfaSatisfied`; when it is not met and the user has TOTP,
 * the identity is linked and the browser goes to the second-factor page with a pending
 * sign-in (pending-mfa.ts) instead of a session. Audit: UserLogin with metadata.method
 * "sso" and connectionId, SsoIdentityLinked on the first link, UserSignup for a new user,
 * UserLoginFailed with metadata.reason for every refusal.
 */
export async function finishSsoSignIn(
  deps: SsoSignInDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  connection: SsoConnection,
  assertion: SsoAssertion,
): Promise<FastifyReply> {
  const { tenant } = request
  if (connection.tenantId !== tenant.id) throw new Error('the connection is not this tenant’s')
  const raw = assertion.email?.trim() ?? ''
  const email = raw && isEmail(raw) ? normalizeEmail(raw) : null
  if (!connection.enabled) {
    return refuseSsoSignIn(deps, request, reply, connection, 'connection_disabled', { email })
  }
  const scope: FlowScope = { kind: 'sso', id: connection.id }
  const flow = readFlow(deps, request, tenant, scope)
  const failVia = { method: 'sso', connectionId: connection.id }
  return signInThroughFlow(deps, request, reply, scope, flow, {
    source: connectionSource(deps, tenant, connection, assertion, email && raw, flow),
    failVia,
    email,
    amr: assertion.mfa ? ['fed', 'mfa'] : ['fed'],
  })
}

/**
 * The end of a browser sign-in flow: the identity `source` vouches for is signed in through
 * the one linker (federation/link.ts), and the browser is answered: the refusal page, a 303 to
 * the second-factor page with a pending sign-in, or the hosted-pages session opened and a 303
 * to the authorization the flow serves, else to its `returnTo`, else to the account page.
 */
export async function signInThroughFlow(
  deps: SsoSignInDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: FlowScope,
  flow: Flow,
  how: {
    source: IdentitySource
    failVia: Record<string, unknown>
    email: string | null
    amr: string[]
  },
): Promise<FastifyReply> {
  const { tenant } = request
  // CONTRACT §21: the browser's remembered device, if any, may stand in for the second factor.
  const deviceToken = deviceTokenOf(readCookies(request), deps.config.publicUrl, tenant.slug)
  const source: IdentitySource = deviceToken ? { ...how.source, deviceToken } : how.source
  let envelope: Awaited<ReturnType<typeof signInWithSource>>
  try {
    envelope = await signInWithSource(deps, tenant, source, request.actor, {
      failVia: how.failVia,
    })
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error
    // signInWithSource audited its refusals; what it threw beyond them (a race, a profile
    // without an address) was not. A hook's deny was audited HookDenied, and the page shows
    // the hook's message (§21).
    const audited = wasAudited(error) || error.reason === 'hook_denied'
    return refuseFlow(deps, request, reply, scope, how.failVia, error.reason, {
      status: error.status,
      email: how.email,
      audited,
      ...(error.reason === 'hook_denied' ? { words: error.message } : {}),
    })
  }
  forgetFlow(deps, reply, tenant.slug, scope)
  deps.ssoPages.headers(reply, { authorization: flow.interaction !== undefined })
  if ('pendingSecondFactor' in envelope) {
    // The second factor is asked on the tenant's pages, in this browser (pending-mfa.ts).
    const { name, ...where } = pendingCookie(deps.config.publicUrl, tenant.slug)
    setCookie(reply, name, envelope.pendingSecondFactor, { ...where, maxAge: PENDING_TTL })
    return reply
      .code(303)
      .header('location', deps.ssoPages.secondFactorPath(tenant.slug))
      .type('text/plain; charset=utf-8')
      .send('')
  }
  const next = deps.ssoPages.signedIn(request, reply, tenant, {
    accessToken: envelope.accessToken,
    refreshToken: envelope.refreshToken,
    expiresAt: Date.now() + envelope.accessTokenExpiresIn * 1000,
    amr: how.amr,
    interaction: flow.interaction,
  })
  const to = flow.interaction === undefined && flow.returnTo ? flow.returnTo : next
  return reply.code(303).header('location', to).type('text/plain; charset=utf-8').send('')
}
