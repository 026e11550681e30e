// Organization tokens from the tenant's OpenID provider (CONTRACT §18, Provider; issue 33).
// An application asks for one with `organization_id={id}`:
//   - at the authorization endpoint (or PAR), an extra parameter (organizationParameter);
//     `prompt=select_organization` has the hosted pages ask which (the `select_organization`
//     prompt: the picker's answer is the interaction result's organizationId, which wins over
//     the parameter). After the sign-in, the `organization` prompt checks the user: one who
//     is not a member of that organization of this tenant (an unknown id, another tenant's,
//     a malformed one alike) ends the request with access_denied, nothing issued; for an
//     organization with `mfaRequired` a provider session whose service session proved no
//     second factor is asked for one by the hosted pages (prompt=none: interaction_required).
//     The authorization code keeps the organization (carryOrganization);
//   - at the token endpoint, a refresh_token grant parameter (acceptOrganizationAtRefresh),
//     checked before the refresh token is rotated, so a refusal (access_denied, as RFC 8628
//     §3.5 answers a denied request at the token endpoint and as CONTRACT §18 names it) spends
//     nothing. The refresh token stays the user's, as the service's own auth/refresh keeps it:
//     a refresh without organization_id answers a plain token.
// The access token of a code or refresh for an organization carries `org_id` and `org_roles`
// (the roles held there) and, for a resource, only the scopes those roles list
// (resources.ts); membership and the second factor are read again at each issue, so a member
// removed gets no organization token at the next refresh. The device flow takes no
// organization_id (invalid_request).
// @ts-expect-error: oidc-provider ships no type declarations.
import { errors, interactionPolicy } from 'oidc-provider'
// @ts-expect-error: oidc-provider's record of a provider's grant handlers and their parameters.
import instance from 'oidc-provider/lib/helpers/weak_cache.js'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'
import { findLiveSession } from '../introspection/live-session.ts'
import { organizationClaims } from '../organizations/claims.ts'
import type { HeldRole } from '../roles/resource-scopes.ts'
import { SERVICE_SESSION } from './browser-sign-in.ts'

/** The authorization request and refresh_token grant parameter. */
export const ORGANIZATION_ID = 'organization_id'
/** The prompt (and interaction result key) of the hosted pages' organization picker. */
export const SELECT_ORGANIZATION = 'select_organization'
/** The prompt that checks the organization asked for once the user is known. */
export const ORGANIZATION_PROMPT = 'organization'
/** Its check for an organization with mfaRequired and a session without a second factor. */
export const NEEDS_SECOND_FACTOR = 'organization_second_factor'

export interface OrganizationDeps {
  db: Db
  clock: Clock
}

/** What an organization token is made of. */
export interface OrganizationToken {
  orgId: string
  orgRoles: string[]
  mfaRequired: boolean
  roles: Pick<HeldRole, 'resourceScopes'>[]
}

/** What this file reads of oidc-provider's Koa context (it ships no types). */
interface Ctx {
  oidc: {
    route: string
    params: Record<string, unknown>
    result?: Record<string, unknown>
    session?: { accountId?: string; [SERVICE_SESSION]?: string }
    client?: { clientId: string }
    entities: { AuthorizationCode?: GrantSource; RefreshToken?: GrantSource }
    provider: {
      Session: { findByUid(uid: string): Promise<Record<string, unknown> | undefined> }
      RefreshToken: { find(value: string, options: object): Promise<GrantSource | undefined> }
    }
  }
}

/** A code or refresh token, as far as this file reads it. */
interface GrantSource {
  accountId?: string
  sessionUid?: string
  clientId?: string
  organizationId?: string
  isExpired?: boolean
  consumed?: unknown
  kind?: string
}

const notMember = () => new errors.AccessDenied('the user is not a member of this organization')

/**
 * The `extraParams` check of organization_id: its value is checked once the user is known
 * (the organization prompt); the device flow has no step for it and refuses it.
 */
export function organizationParameter(ctx: Ctx, value: unknown): void {
  if (value === undefined) return
  if (ctx.oidc.route === 'device_authorization') {
    throw new errors.InvalidRequest('organization_id is not supported by the device flow')
  }
}

/** The organization an authorization asks for: the picker's answer, else the parameter. */
export function askedOrganization(ctx: Ctx): string | undefined {
  const chosen = ctx.oidc.result?.[SELECT_ORGANIZATION] as { organizationId?: unknown } | undefined
  const id = chosen?.organizationId ?? ctx.oidc.params[ORGANIZATION_ID]
  return typeof id === 'string' && id !== '' ? id : undefined
}

/** The organization of the interaction as the hosted pages read it (the mfa page names it). */
export function interactionOrganization(interaction: {
  params: Record<string, unknown>
  lastSubmission?: Record<string, unknown>
}): string | undefined {
  return askedOrganization({
    oidc: { params: interaction.params, result: interaction.lastSubmission },
  } as Ctx)
}

/** The member's token claims, or access_denied for anyone who is not a member. */
async function memberOf(
  deps: OrganizationDeps,
  tenantId: string,
  organizationId: string,
  accountId: string,
): Promise<OrganizationToken> {
  try {
    return await organizationClaims(deps.db, tenantId, organizationId, accountId)
  } catch (error) {
    if (error instanceof AppError && error.reason === 'not_a_member') throw notMember()
    throw error
  }
}

/** Whether the service session `sid` of the user is live and proved a second factor. */
async function provedSecondFactor(
  deps: OrganizationDeps,
  tenantId: string,
  sid: unknown,
  accountId: string,
): Promise<boolean> {
  if (typeof sid !== 'string') return false
  const live = await findLiveSession(deps.db, tenantId, sid, accountId, deps.clock.now())
  return live?.status === 'Active' && live.secondFactor
}

/** The authorization's organization, once per request (loadExistingGrant and the prompt ask). */
const authorized = new WeakMap<object, Promise<OrganizationToken | undefined>>()

/**
 * The organization an authorization asks for, once its user is known: the member's claims,
 * undefined when none is asked (or no one is signed in yet), access_denied for a user who is
 * not a member. Asked before the first-party grant is made (provider.ts, loadExistingGrant),
 * so a refused request leaves no grant behind either.
 */
export function authorizationOrganization(deps: OrganizationDeps, tenantId: string) {
  return (ctx: Ctx): Promise<OrganizationToken | undefined> => {
    let answer = authorized.get(ctx.oidc)
    if (!answer) {
      const organizationId = askedOrganization(ctx)
      const accountId = ctx.oidc.session?.accountId
      answer =
        organizationId && accountId
          ? memberOf(deps, tenantId, organizationId, accountId)
          : Promise.resolve(undefined)
      authorized.set(ctx.oidc, answer)
    }
    return answer
  }
}

/**
 * The prompts of organization tokens, after the login: the picker (requestable, so
 * `prompt=select_organization` is accepted) and the organization's checks.
 */
export function organizationPrompts(deps: OrganizationDeps, tenantId: string) {
  const organizationOf = authorizationOrganization(deps, tenantId)
  const picker = new interactionPolicy.Prompt({ name: SELECT_ORGANIZATION, requestable: true })
  const checks = new interactionPolicy.Prompt(
    { name: ORGANIZATION_PROMPT, requestable: false },
    new interactionPolicy.Check(
      NEEDS_SECOND_FACTOR,
      'the organization requires a sign-in with a second factor',
      'interaction_required',
      async (ctx: Ctx) => {
        // Not a member: the request ends here (its error goes back to the application).
        const member = await organizationOf(ctx)
        const session = ctx.oidc.session
        if (!member?.mfaRequired || !session?.accountId) return false
        const sid = session[SERVICE_SESSION]
        return !(await provedSecondFactor(deps, tenantId, sid, session.accountId))
      },
    ),
  )
  return [picker, checks]
}

/**
 * Keeps the organization the authorization was for in its code (the code's `organizationId`,
 * added to its stored fields in provider.ts). Called by oidc-provider's `expiresWithSession`,
 * its one hook on a code about to be saved.
 */
export function carryOrganization(ctx: Ctx, code: GrantSource): void {
  if (code.kind !== 'AuthorizationCode') return
  const organizationId = askedOrganization(ctx)
  if (organizationId) code.organizationId = organizationId
}

/** The token request's organization, once per request (resources.ts and extraTokenClaims ask). */
const resolved = new WeakMap<object, Promise<OrganizationToken | undefined>>()

/** For a code or refresh token of the user: the member's claims and the second factor checked. */
async function tokenFor(
  deps: OrganizationDeps,
  tenantId: string,
  ctx: Ctx,
  organizationId: string,
  source: GrantSource,
): Promise<OrganizationToken> {
  if (!source.accountId) throw notMember()
  const member = await memberOf(deps, tenantId, organizationId, source.accountId)
  if (member.mfaRequired) {
    // The service session the grant's sign-in came from, through the provider session.
    const session = source.sessionUid
      ? await ctx.oidc.provider.Session.findByUid(source.sessionUid)
      : undefined
    if (!(await provedSecondFactor(deps, tenantId, session?.[SERVICE_SESSION], source.accountId))) {
      throw new errors.AccessDenied('this organization requires a sign-in with a second factor')
    }
  }
  return member
}

/**
 * The organization a token request is for, or undefined: a code's (carryOrganization), a
 * refresh's organization_id. Throws access_denied for a user who may not have its token.
 */
export function tokenOrganization(deps: OrganizationDeps, tenantId: string) {
  return (ctx: Ctx): Promise<OrganizationToken | undefined> => {
    let answer = resolved.get(ctx.oidc)
    if (!answer) {
      answer = (async () => {
        if (ctx.oidc.route !== 'token') return undefined
        const { grant_type: grantType } = ctx.oidc.params
        const source =
          grantType === 'refresh_token'
            ? ctx.oidc.entities.RefreshToken
            : grantType === 'authorization_code'
              ? ctx.oidc.entities.AuthorizationCode
              : undefined
        const asked =
          grantType === 'refresh_token' ? ctx.oidc.params[ORGANIZATION_ID] : source?.organizationId
        if (!source || typeof asked !== 'string') return undefined
        return tokenFor(deps, tenantId, ctx, asked, source)
      })()
      resolved.set(ctx.oidc, answer)
    }
    return answer
  }
}

interface GrantInternals {
  grantTypeHandlers: Map<string, (ctx: Ctx) => Promise<void>>
  grantTypeParams: Map<string, Set<string>>
  grantTypeDupes: Map<string, Set<string>>
}

/**
 * Adds organization_id to oidc-provider's own refresh_token grant: checked against the
 * refresh token before the grant runs (which rotates the token first and mints after), so a
 * refusal spends nothing. A token the grant will refuse anyway (unknown, another client's,
 * expired, spent) is left to it, with its own answer.
 */
export function acceptOrganizationAtRefresh(
  provider: {
    registerGrantType(name: string, handler: unknown, params: string[], dupes?: string[]): void
  },
  deps: OrganizationDeps,
  tenantId: string,
): void {
  const internals = instance(provider) as GrantInternals
  const handler = internals.grantTypeHandlers.get('refresh_token')
  if (!handler) throw new Error('the refresh_token grant is not registered')
  const params = [...(internals.grantTypeParams.get('refresh_token') ?? []), ORGANIZATION_ID]
  const dupes = internals.grantTypeDupes.get('refresh_token')
  async function refreshWithOrganization(ctx: Ctx) {
    const asked = ctx.oidc.params[ORGANIZATION_ID]
    const value = ctx.oidc.params.refresh_token
    if (typeof asked === 'string' && typeof value === 'string') {
      const token = await ctx.oidc.provider.RefreshToken.find(value, { ignoreExpiration: true })
      if (
        token &&
        token.clientId === ctx.oidc.client?.clientId &&
        !token.isExpired &&
        !token.consumed
      ) {
        const answer = tokenFor(deps, tenantId, ctx, asked, token)
        resolved.set(ctx.oidc, answer)
        await answer
      }
    }
    return handler?.(ctx)
  }
  provider.registerGrantType('refresh_token', refreshWithOrganization, params, dupes && [...dupes])
}
