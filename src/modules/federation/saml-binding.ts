// The SAML requests outstanding in one browser (CONTRACT §12: InResponseTo of an outstanding
// request of this browser, bound by a cookie). Starting a sign-in adds the AuthnRequest's ID
// to a sealed cookie of the connection (over https `__Host-ta_saml_{slug}_{connection}` at
// `/`, CONTRACT §16; over http scoped to the ACS); the ACS accepts a response only to an ID
// the cookie lists and not yet past its ten minutes, and spends it. The IdP posts the
// response from its own site, a cross-site POST: over https the cookie is
// `SameSite=None; Secure`, or the browser would not send it; over plain http (development
// only) a browser refuses SameSite=None without Secure, so it is Lax there, and the IdP must
// be same-site with the service (the tests put both on localhost).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { readCookies, setCookie } from '../../lib/cookies.ts'
import { hostCookie } from '../../lib/host-cookie.ts'

export const SAML_COOKIE = 'ta_saml'
/** How long an AuthnRequest stays outstanding. */
export const SAML_REQUEST_TTL_MS = 10 * 60 * 1000
/** Sign-ins begun in several tabs each come back; the oldest beyond this are forgotten. */
const KEPT = 5

type BindingDeps = Pick<Deps, 'config' | 'cipher'>
interface Outstanding {
  id: string
  exp: number
}

const aad = (tenantId: string, connectionId: string) => `saml-request:${tenantId}:${connectionId}`
const acsPath = (slug: string, connectionId: string) => `/v1/${slug}/sso/${connectionId}/saml/acs`

/** Over https `__Host-ta_saml_{slug}_{connection}` at `/` (CONTRACT §16), else at the ACS. */
const samlCookie = (deps: BindingDeps, slug: string, connectionId: string) =>
  hostCookie(deps.config.publicUrl, SAML_COOKIE, [slug, connectionId], acsPath(slug, connectionId))

const cookieValue = (
  deps: BindingDeps,
  request: FastifyRequest,
  slug: string,
  connectionId: string,
): string | undefined => readCookies(request)[samlCookie(deps, slug, connectionId).name]

function opened(
  deps: BindingDeps,
  request: FastifyRequest,
  tenant: { id: string; slug: string },
  connectionId: string,
  now: number,
): Outstanding[] {
  const tenantId = tenant.id
  const sealed = cookieValue(deps, request, tenant.slug, connectionId)
  if (!sealed) return []
  try {
    const list: unknown = JSON.parse(deps.cipher.decrypt(sealed, aad(tenantId, connectionId)))
    if (!Array.isArray(list)) return []
    return list.filter(
      (x): x is Outstanding =>
        typeof x?.id === 'string' && typeof x?.exp === 'number' && x.exp > now,
    )
  } catch {
    return []
  }
}

function write(
  deps: BindingDeps,
  reply: FastifyReply,
  tenant: { id: string; slug: string },
  connectionId: string,
  list: Outstanding[],
): void {
  const sealed = list.length
    ? deps.cipher.encrypt(JSON.stringify(list), aad(tenant.id, connectionId))
    : ''
  const { name, ...where } = samlCookie(deps, tenant.slug, connectionId)
  setCookie(reply, name, sealed, {
    ...where,
    sameSite: 'None',
    maxAge: list.length ? SAML_REQUEST_TTL_MS / 1000 : 0,
  })
}

/** Binds `requestId` to this browser for the connection's ACS. */
export function rememberSamlRequest(
  deps: BindingDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: { id: string; slug: string },
  connectionId: string,
  requestId: string,
  now: Date,
): void {
  const at = now.getTime()
  const list = [
    ...opened(deps, request, tenant, connectionId, at),
    { id: requestId, exp: at + SAML_REQUEST_TTL_MS },
  ]
  write(deps, reply, tenant, connectionId, list.slice(-KEPT))
}

/**
 * The request `inResponseTo` names, when this browser has it outstanding: spent (taken out of
 * the cookie) either way, so a response is never matched twice. Undefined when it is not.
 */
export function spendSamlRequest(
  deps: BindingDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: { id: string; slug: string },
  connectionId: string,
  inResponseTo: string | undefined,
  now: Date,
): string | undefined {
  const list = opened(deps, request, tenant, connectionId, now.getTime())
  const found = list.find((x) => x.id === inResponseTo)
  if (cookieValue(deps, request, tenant.slug, connectionId) !== undefined) {
    write(
      deps,
      reply,
      tenant,
      connectionId,
      list.filter((x) => x.id !== inResponseTo),
    )
  }
  return found?.id
}
