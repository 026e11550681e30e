// Passkeys of the signed-in user (CONTRACT §9): registration in two steps (options, then the
// authenticator's response), the list, removal. WebAuthn Level 3 §7.1 is run by
// @simplewebauthn/server; this file adds what the library leaves to the relying party:
// the challenge store (single use, 5 minutes, bound to tenant, ceremony and user), the
// tenant switch, the per-user cap, and the audit row and alert of each change.
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import { describeUserAgent } from '../../lib/user-agent.ts'
import type { Actor } from '../audit/recorder.ts'
import { sendSecurityAlert } from '../notifications/security.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserById, lockUserRow, type User } from '../users/reads.ts'
import * as store from './queries.ts'
import type { Passkey, RegisterBody } from './schemas.ts'
import {
  ALGORITHMS,
  CHALLENGE_TTL_SECONDS,
  checkAttestationShape,
  checkRawId,
  MAX_PASSKEYS_PER_USER,
  newChallenge,
  relyingParty,
  signedChallenge,
  userHandle,
  webauthnLibrary,
} from './webauthn.ts'

/** CONTRACT §9: with `passkeysEnabled` off, registration and sign-in answer 403. */
export function requirePasskeys(tenant: Tenant): void {
  if (!tenant.passkeysEnabled) fail('passkeys_disabled')
}

export const present = (row: store.PasskeyRow): Passkey => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
})

async function signedInUser(deps: Pick<Deps, 'db'>, tenant: Tenant, userId: string) {
  const user = await findUserById(deps.db, tenant.id, userId)
  if (!user) fail('session_revoked')
  return user
}

function tooMany(): never {
  fail('validation', {
    message: `An account holds at most ${MAX_PASSKEYS_PER_USER} passkeys; remove one first.`,
    details: { issues: [{ path: 'body', message: 'too many passkeys' }] },
  })
}

/** Stores a new challenge, dropping the tenant's long-expired ones on the way. */
export async function issueChallenge(
  deps: Pick<Deps, 'clock' | 'db'>,
  tenantId: string,
  ceremony: store.Ceremony,
  userId: string | null,
): Promise<Uint8Array<ArrayBuffer>> {
  const challenge = newChallenge()
  const now = deps.clock.now()
  await store.deleteStaleChallenges(deps.db, tenantId, now, CHALLENGE_TTL_SECONDS)
  await store.insertChallenge(deps.db, {
    tenantId,
    challengeHash: hashToken(Buffer.from(challenge).toString('base64url')),
    ceremony,
    userId,
    now,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000),
  })
  return challenge
}

/** POST me/passkeys/registration-options. */
export async function registrationOptions(
  deps: Pick<Deps, 'clock' | 'config' | 'db'>,
  tenant: Tenant,
  userId: string,
) {
  requirePasskeys(tenant)
  const user = await signedInUser(deps, tenant, userId)
  const existing = await store.listPasskeys(deps.db, tenant.id, user.id)
  if (existing.length >= MAX_PASSKEYS_PER_USER) tooMany()
  const challenge = await issueChallenge(deps, tenant.id, 'registration', user.id)
  const rp = relyingParty(deps.config)
  const options = await (await webauthnLibrary()).generateRegistrationOptions({
    rpName: tenant.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.email,
    userID: userHandle(user.id),
    challenge,
    timeout: CHALLENGE_TTL_SECONDS * 1000,
    attestationType: 'none',
    // The authenticator may refuse to keep a discoverable credential (a security key
    // that is full): such a passkey still signs in when the email is given.
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
  })
  const { hints: _hints, ...json } = options
  return json as typeof json & { authenticatorSelection: { requireResidentKey: boolean } }
}

/**
 * POST me/passkeys. The challenge is spent first (one statement), whatever follows: a
 * registration response is good for one try. A response that does not verify is a 400.
 */
export async function registerPasskey(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'mailer'>,
  tenant: Tenant,
  userId: string,
  body: RegisterBody,
  actor: Actor,
): Promise<Passkey> {
  requirePasskeys(tenant)
  const { response } = body
  const challenge = signedChallenge(response.response.clientDataJSON)
  await checkAttestationShape(response.response.attestationObject)
  checkRawId(response)
  const user = await signedInUser(deps, tenant, userId)

  const now = deps.clock.now()
  const spent = await store.spendChallenge(
    deps.db,
    tenant.id,
    hashToken(challenge),
    'registration',
    now,
  )
  if (!spent || spent.userId !== user.id) notVerified()
  const rp = relyingParty(deps.config)
  const verified = await (await webauthnLibrary())
    .verifyRegistrationResponse({
      response: { ...response, clientExtensionResults: {} },
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    })
    .catch(() => undefined)
  const info = verified?.verified ? verified.registrationInfo : notVerified()
  if (info.credential.id !== response.id) notVerified()

  const row = await deps.db.transaction(async (tx) => {
    // The user's row is locked so that two registrations in parallel see each other's count.
    await lockUserRow(tx, tenant.id, user.id)
    const held = await store.listPasskeys(tx, tenant.id, user.id)
    if (held.length >= MAX_PASSKEYS_PER_USER) tooMany()
    const inserted = await store.insertPasskey(tx, {
      tenantId: tenant.id,
      id: uuidv7(now.getTime()),
      userId: user.id,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey),
      signCount: info.credential.counter,
      transports: [...new Set(response.response.transports ?? [])],
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      name: passkeyName(body.name, actor.userAgent),
      createdAt: now,
    })
    if (!inserted) fail('already_enrolled', { message: 'This passkey is already registered.' })
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'PasskeyRegistered',
        userId: user.id,
        email: user.emailNormalized,
        metadata: {
          passkeyId: inserted.id,
          deviceType: inserted.deviceType,
          backedUp: inserted.backedUp,
        },
      },
    ])
    return inserted
  })
  alert(deps, tenant, user, 'passkey_added', actor)
  return present(row)
}

function notVerified(): never {
  fail('validation', {
    message: 'The passkey could not be verified: ask for new registration options and try again.',
    details: { issues: [{ path: 'body.response', message: 'does not verify' }] },
  })
}

/** The name given (control characters folded, trimmed), else the browser that registered it. */
function passkeyName(given: string | undefined, userAgent: string | null): string {
  const name = (given ?? '').replace(/\p{Cc}+/gu, ' ').trim()
  if (name) return name
  const browser = describeUserAgent(userAgent)
  return browser === 'an unknown browser' ? 'Passkey' : browser
}

/** GET me/passkeys. */
export async function listOwnPasskeys(deps: Pick<Deps, 'db'>, tenant: Tenant, userId: string) {
  const rows = await store.listPasskeys(deps.db, tenant.id, userId)
  return { items: rows.map(present) }
}

/** The users among `userIds` with a passkey registered (users/credentials.ts asks). */
export function passkeyHolders(db: Handle, tenantId: string, userIds: string[]) {
  return store.usersWithPasskeys(db, tenantId, userIds)
}

/** DELETE me/passkeys/{id}: another user's or an unknown id is 404 `not_found`. */
export async function removePasskey(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'mailer'>,
  tenant: Tenant,
  userId: string,
  id: string,
  actor: Actor,
): Promise<void> {
  const user = await signedInUser(deps, tenant, userId)
  await deps.db.transaction(async (tx) => {
    const removed = await store.deletePasskey(tx, tenant.id, user.id, id)
    if (!removed) fail('not_found', { message: 'No such passkey.' })
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'PasskeyRemoved',
        userId: user.id,
        email: user.emailNormalized,
        metadata: { passkeyId: removed.id },
      },
    ])
  })
  alert(deps, tenant, user, 'passkey_removed', actor)
}

function alert(
  deps: Pick<Deps, 'clock' | 'config' | 'mailer'>,
  tenant: Tenant,
  user: User,
  event: 'passkey_added' | 'passkey_removed',
  actor: Actor,
): void {
  sendSecurityAlert(deps, tenant, user, { event, ip: actor.ip, userAgent: actor.userAgent })
}
