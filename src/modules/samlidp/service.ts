// The rules of the SAML IdP (CONTRACT §22): which application an AuthnRequest is for (its
// Issuer, a saml application of this tenant), which ACS the response goes to (a registered
// one: the request's, by URL or index, else the first), whether the request must be signed
// (the SP has certificates), that it was addressed to this IdP, and the response for a
// signed-in user: the NameID of the application's format, the attributes it asks for,
// signed with the tenant's key.

import { createHash } from 'node:crypto'
import type { SamlSettings } from '../../db/schema.ts'
import type { Deps } from '../../deps.ts'
import { isUuid } from '../../lib/ids.ts'
import {
  type Application,
  findApplication,
  findSamlApplicationByEntityId,
} from '../applications/clients.ts'
import { userRoleNames } from '../roles/members.ts'
import { userById } from '../users/service.ts'
import {
  type AuthnRequest,
  carriesSignature,
  readAuthnRequest,
  SamlIdpError,
  verifyPosted,
  verifyRedirect,
} from './authn-request.ts'
import { samlSigningKeys } from './keys.ts'
import { idpEndpoints } from './metadata.ts'
import { buildSamlResponse } from './response.ts'
import { NAMEID_FORMATS } from './sp-metadata.ts'

export interface SamlApp {
  id: string
  name: string
  settings: SamlSettings
}

const asSamlApp = (row: Application | undefined): SamlApp | undefined =>
  row?.type === 'saml' && row.saml ? { id: row.id, name: row.name, settings: row.saml } : undefined

/** The tenant's saml application `id` (another tenant's, or an OIDC one: none). */
export async function samlAppById(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) return undefined
  return asSamlApp(await findApplication(deps.db, tenantId, id))
}

/**
 * SAML Bindings §3.4.3 asks SPs for at most 80 bytes of RelayState, yet SPs send their return
 * URL there (SimpleSAMLphp does): up to 512 bytes are handed back, more is refused.
 */
export const MAX_RELAY_STATE = 512

/**
 * An AuthnRequest is taken within five minutes either side of its IssueInstant by the
 * service's clock (SAML Core §3.2.1 leaves the window to the IdP): long enough for a clock
 * a little off and a slow redirect, short enough that a request someone kept (a link in a
 * log, a browser's history) is no way in later. The response's own validity is five
 * minutes too (response.ts).
 */
export const REQUEST_WINDOW_MS = 5 * 60 * 1000

export interface CheckedRequest {
  app: SamlApp
  request: AuthnRequest
  acsUrl: string
}

/**
 * An AuthnRequest of either binding, checked: its SP, its ACS, (when the SP has
 * certificates) its signature, its Destination (required when signed) and its IssueInstant,
 * then its ID spent.
 * `rawQuery` is the HTTP-Redirect query string as sent.
 */
export async function checkAuthnRequest(
  deps: Pick<Deps, 'db' | 'config' | 'clock' | 'spentSamlRequests'>,
  tenant: { id: string; slug: string },
  input:
    | { binding: 'redirect'; samlRequest: string; rawQuery: string }
    | { binding: 'post'; samlRequest: string },
): Promise<CheckedRequest> {
  const request = readAuthnRequest(input.samlRequest, input.binding === 'redirect')
  const app = asSamlApp(await findSamlApplicationByEntityId(deps.db, tenant.id, request.issuer))
  if (!app) throw new SamlIdpError('saml_unknown_sp', request.issuer)
  const { acsUrls, spCertificates } = app.settings
  // CONTRACT §22: the ACS must be registered; an unregistered one gets an error page, never
  // a post (the request may come from anyone who knows the entity id).
  let acsUrl = acsUrls[0]
  if (request.acsUrl !== undefined) {
    if (!acsUrls.includes(request.acsUrl)) throw new SamlIdpError('saml_acs_unregistered')
    acsUrl = request.acsUrl
  } else if (request.acsIndex !== undefined) {
    // SAML Core §3.4.1: the index of one of the SP's AssertionConsumerService endpoints in
    // its metadata. An application made from metadata knows them (another binding's index
    // is none of them); one made from fields has none, and its index is the position in
    // acsUrls.
    const indexes = app.settings.acsIndexes ?? []
    const byIndex =
      indexes.length > 0
        ? indexes.find((entry) => entry.index === request.acsIndex)?.url
        : acsUrls[request.acsIndex]
    if (!byIndex || !acsUrls.includes(byIndex)) throw new SamlIdpError('saml_acs_unregistered')
    acsUrl = byIndex
  }
  if (spCertificates.length > 0) {
    if (input.binding === 'redirect') verifyRedirect(input.rawQuery, spCertificates)
    else verifyPosted(request, spCertificates)
  }
  // SAML Core §3.2.1: a Destination that is not where the request arrived means the request
  // was made for another IdP (or another tenant's, whose SSO URL differs by the slug), and
  // is discarded. The SSO URL is one for both bindings (metadata.ts), from PUBLIC_URL, never
  // from the request's Host.
  const ssoUrl = idpEndpoints(deps.config.publicUrl, tenant.slug).ssoUrl
  if (request.destination === undefined) {
    // SAML Bindings §3.4.5.2 (HTTP-Redirect), §3.5.5.2 (HTTP-POST): a signed message MUST
    // name its Destination, which the recipient MUST check. Without it the signature binds
    // the request to no IdP: one signed for another IdP of the SP, or another tenant's (the
    // same entity id may be an application of several), would be taken here. Refused as a
    // wrong Destination, whether or not the SP's certificates let the signature be checked;
    // Destination stays optional on an unsigned request (Core §3.2.1).
    if (carriesSignature(request, input)) {
      throw new SamlIdpError('saml_wrong_destination', 'none on a signed request')
    }
  } else if (request.destination !== ssoUrl) {
    throw new SamlIdpError('saml_wrong_destination', request.destination)
  }
  const now = deps.clock.now().getTime()
  const issued = request.issueInstant.getTime()
  if (now - issued > REQUEST_WINDOW_MS) throw new SamlIdpError('saml_request_expired')
  if (issued - now > REQUEST_WINDOW_MS) throw new SamlIdpError('saml_request_not_yet_valid')
  // An ID is taken once per application (SAML Core §1.3.4: the sender makes it unique): a
  // request copied from a log, a proxy or a browser's history starts no second sign-in. It
  // is spent last, by a request that passed every other check (a forged one spends
  // nothing), and remembered until its window closes, after which IssueInstant refuses it
  // anyway: in Redis for every instance, else in this process (lib/spent-once.ts).
  const fresh = await deps.spentSamlRequests.spend(
    `${tenant.id}:${app.id}:${request.id}`,
    now,
    issued + REQUEST_WINDOW_MS,
  )
  if (!fresh) throw new SamlIdpError('saml_request_replayed')
  return { app, request, acsUrl }
}

/** SAML NameID per format: the email; a pairwise opaque id; the user id. */
function nameIdOf(app: SamlApp, user: { id: string; email: string }): string {
  switch (app.settings.nameIdFormat) {
    case 'persistent':
      return createHash('sha256').update(`${app.id}:${user.id}`).digest('base64url')
    case 'unspecified':
      return user.id
    default:
      return user.email
  }
}

/** Whether the application is told the user's address: its NameID or an attribute. */
function assertsEmail(app: SamlApp): boolean {
  return (
    app.settings.nameIdFormat === 'emailAddress' ||
    app.settings.attributes.some((a) => a.from === 'email')
  )
}

export interface SignedInUser {
  userId: string
  sessionId: string
  signedInAt: Date
  amr: string[]
}

/**
 * The signed response for `signIn` to `app` at `acsUrl`, or undefined when the user is no
 * longer an Active user of the tenant (the page then signs the browser in again).
 */
export async function samlResponseFor(
  deps: Pick<Deps, 'db' | 'config' | 'clock'>,
  tenant: { id: string; slug: string },
  app: SamlApp,
  signIn: SignedInUser,
  target: { acsUrl: string; requestId?: string },
): Promise<string | 'email_not_verified' | undefined> {
  const user = await userById(deps, tenant.id, signIn.userId)
  if (user?.status !== 'Active') return undefined
  // SAML has no email_verified: an SP takes the NameID and the mail attribute as the
  // address's owner, so an address nobody confirmed is never asserted (an account at the SP
  // could otherwise be taken by signing up here with its address).
  if (!user.emailVerified && assertsEmail(app)) return 'email_not_verified'
  const [key] = samlSigningKeys(deps.config.oidcSigningKeys, tenant.id)
  if (!key) return undefined
  const wantsRoles = app.settings.attributes.some((a) => a.from === 'roles')
  const roles = wantsRoles ? [user.role, ...(await userRoleNames(deps.db, tenant.id, user.id))] : []
  const value = (from: SamlSettings['attributes'][number]['from']): string[] => {
    if (from === 'roles') return roles
    const found = from === 'id' ? user.id : user[from]
    return typeof found === 'string' && found ? [found] : []
  }
  return buildSamlResponse({
    idpEntityId: idpEndpoints(deps.config.publicUrl, tenant.slug).entityId,
    spEntityId: app.settings.entityId,
    acsUrl: target.acsUrl,
    inResponseTo: target.requestId,
    nameId: nameIdOf(app, user),
    nameIdFormat: NAMEID_FORMATS[app.settings.nameIdFormat],
    sessionIndex: signIn.sessionId,
    authnInstant: signIn.signedInAt,
    mfa: signIn.amr.includes('mfa') || signIn.amr.includes('otp') || signIn.amr.includes('hwk'),
    attributes: app.settings.attributes.map((a) => ({ name: a.name, values: value(a.from) })),
    signResponse: app.settings.signResponse,
    key,
    now: deps.clock.now(),
  })
}
