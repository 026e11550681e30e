// The SAML sign-ins a browser has begun (CONTRACT §22): the SSO endpoint (or an IdP-initiated
// start) checks the request, then keeps what the response needs (the application, the ACS,
// InResponseTo, RelayState) in a sealed cookie under a random uid and sends the browser to
// the hosted page `/t/{slug}/saml/{uid}`, which signs the user in as an OpenID interaction's
// page does and posts the response. The cookie is SameSite=Lax (the browser comes back to it
// by top-level GETs); over https `__Host-ta_saml_idp_{slug}` at `/`, over http scoped to
// the tenant's pages. Ten minutes, the last five kept, each used once.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { readCookies, setCookie } from '../../lib/cookies.ts'
import { randomToken } from '../../lib/crypto.ts'
import { hostCookie } from '../../lib/host-cookie.ts'

export const PENDING_TTL_MS = 10 * 60 * 1000
const KEPT = 5

export interface PendingSamlSignIn {
  uid: string
  appId: string
  acsUrl: string
  /** The AuthnRequest's ID (SP-initiated); none for an IdP-initiated sign-in. */
  requestId?: string
  relayState?: string
  forceAuthn: boolean
  exp: number
}

type PendingDeps = Pick<Deps, 'config' | 'cipher'>
type Tenant = { id: string; slug: string }

const aad = (tenantId: string) => `saml-idp-pending:${tenantId}`
const cookieOf = (deps: PendingDeps, slug: string) =>
  hostCookie(deps.config.publicUrl, 'ta_saml_idp', [slug], `/t/${slug}`)

/** The path of the hosted page that carries a pending sign-in on. */
export const samlPagePath = (slug: string, uid: string) => `/t/${slug}/saml/${uid}`

function read(deps: PendingDeps, request: FastifyRequest, tenant: Tenant, now: number) {
  const sealed = readCookies(request)[cookieOf(deps, tenant.slug).name]
  if (!sealed) return []
  try {
    const list: unknown = JSON.parse(deps.cipher.decrypt(sealed, aad(tenant.id)))
    if (!Array.isArray(list)) return []
    return list.filter(
      (x): x is PendingSamlSignIn =>
        typeof x?.uid === 'string' &&
        typeof x?.appId === 'string' &&
        typeof x?.acsUrl === 'string' &&
        typeof x?.exp === 'number' &&
        x.exp > now,
    )
  } catch {
    return []
  }
}

/** A cookie stays under the 4 KiB browsers keep: the oldest sign-ins go first. */
const MAX_COOKIE_CHARS = 3800

function write(deps: PendingDeps, reply: FastifyReply, tenant: Tenant, list: PendingSamlSignIn[]) {
  const { name, ...where } = cookieOf(deps, tenant.slug)
  let kept = list
  let sealed = ''
  while (kept.length > 0) {
    sealed = deps.cipher.encrypt(JSON.stringify(kept), aad(tenant.id))
    if (sealed.length <= MAX_COOKIE_CHARS) break
    kept = kept.slice(1)
    sealed = ''
  }
  setCookie(reply, name, sealed, {
    ...where,
    sameSite: 'Lax',
    maxAge: sealed ? PENDING_TTL_MS / 1000 : 0,
  })
}

/** Keeps a new pending sign-in; answers the hosted page's path for it. */
export function rememberSamlSignIn(
  deps: PendingDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  signIn: Omit<PendingSamlSignIn, 'uid' | 'exp'>,
  now: Date,
): string {
  const uid = randomToken(18)
  const list = read(deps, request, tenant, now.getTime()).slice(-(KEPT - 1))
  list.push({ ...signIn, uid, exp: now.getTime() + PENDING_TTL_MS })
  write(deps, reply, tenant, list)
  return samlPagePath(tenant.slug, uid)
}

/** The pending sign-in `uid` of this browser, still in the cookie. */
export function pendingSamlSignIn(
  deps: PendingDeps,
  request: FastifyRequest,
  tenant: Tenant,
  uid: string,
  now: Date,
): PendingSamlSignIn | undefined {
  return read(deps, request, tenant, now.getTime()).find((p) => p.uid === uid)
}

/** Spends `uid`: the response is posted once. */
export function spendSamlSignIn(
  deps: PendingDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  uid: string,
  now: Date,
): void {
  const list = read(deps, request, tenant, now.getTime())
  write(
    deps,
    reply,
    tenant,
    list.filter((p) => p.uid !== uid),
  )
}
