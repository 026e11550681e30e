// Social sign-in connections (CONTRACT §19): the admin API. Each change is checked before
// anything is written and audited in its transaction. The client secret (and Apple's
// signing key) is sealed and never answered; `callbackUrl` is what the admin registers at
// the provider.
//
// What a connection trusts decides who it signs in: a provider that vouches for a verified
// address is linked to the tenant's user with that address (linkByVerifiedEmail), so a
// connection aimed at a provider of the caller's choosing could sign in as any user, Admins
// included. As for SSO connections (federation/service.ts), an API key therefore creates
// none and changes only `name`, `enabled` and `order`; deleting is open to it.
import type { Deps } from '../../../deps.ts'
import { fail } from '../../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../../lib/ids.ts'
import { readPage } from '../../../lib/paging.ts'
import type { PageQuery } from '../../../schemas.ts'
import type { Actor } from '../../audit/recorder.ts'
import { deleteIdentitiesOf } from '../identities.ts'
import { checkUrl, invalid } from '../input.ts'
import { isAppleKey, sealAppleKey } from './apple.ts'
import { isMicrosoftDirectory } from './microsoft.ts'
import { PRESETS, type SocialProviderName } from './presets.ts'
import * as store from './queries.ts'
import type {
  CreateSocialConnectionBody,
  PatchSocialConnectionBody,
  SocialConnectionRecord,
} from './schemas.ts'
import { sealSocialSecret } from './secret.ts'

type ConnectionDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db'>
type TenantRef = { id: string; slug: string }

/** CONTRACT §19: the redirect URI a connection registers at its provider. */
export const socialCallbackUrl = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  `${deps.config.publicUrl}/v1/${slug}/social/${id}/callback`

/** The connection's scopes: its own, else the preset's; `openid` always for OIDC. */
export function scopesOf(connection: Pick<store.SocialConnection, 'provider' | 'scopes'>) {
  const preset = PRESETS[connection.provider as SocialProviderName]
  const scopes = connection.scopes ?? preset.scopes
  return preset.protocol === 'oidc' && !scopes.includes('openid') ? ['openid', ...scopes] : scopes
}

export function presentSocialConnection(
  deps: Pick<Deps, 'config'>,
  slug: string,
  row: store.SocialConnection,
): SocialConnectionRecord {
  return {
    id: row.id,
    provider: row.provider as SocialProviderName,
    name: row.name,
    clientId: row.clientId,
    hasClientSecret: row.clientSecretEnc !== null,
    apple:
      row.appleTeamId !== null && row.appleKeyId !== null
        ? {
            teamId: row.appleTeamId,
            keyId: row.appleKeyId,
            hasPrivateKey: row.applePrivateKeyEnc !== null,
          }
        : null,
    scopes: scopesOf(row),
    enabled: row.enabled,
    allowSignUp: row.allowSignUp,
    linkByVerifiedEmail: row.linkByVerifiedEmail,
    order: row.sortOrder,
    issuer: row.issuer,
    endpoints: row.endpoints,
    claims: row.claims,
    callbackUrl: socialCallbackUrl(deps, slug, row.id),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

type Shape = Pick<store.SocialConnection, 'provider' | 'issuer' | 'endpoints' | 'claims'> & {
  /** Whether the connection would hold a client secret (stored or given). */
  clientSecret: boolean
  /** Whether it would hold Apple's fields (stored or given). */
  apple: boolean
  /** The Apple key given now, to check. */
  applePrivateKey: string | undefined
}

/**
 * The provider-specific fields of a connection as it would be, checked: a client secret for
 * every provider but apple, whose secret is signed with its `apple` key (required, and for
 * apple only); `issuer` for oidc (required), gitlab (a self-managed instance) and microsoft
 * (its directory: an id, `common` or `organizations`; default `common`); `endpoints` for
 * oauth2 (three required) and github (GitHub Enterprise Server: all three); `claims` for
 * oauth2 only.
 */
function checkShape(deps: Pick<Deps, 'config'>, shape: Shape) {
  const { provider, issuer, endpoints, claims } = shape
  if (provider === 'apple') {
    if (shape.clientSecret)
      invalid('clientSecret', 'is not for apple (its secret is signed with apple.privateKey)')
    if (!shape.apple) invalid('apple', 'is required for apple')
  } else {
    if (!shape.clientSecret) invalid('clientSecret', `is required for ${provider}`)
    if (shape.apple) invalid('apple', `is not for ${provider}`)
  }
  if (shape.applePrivateKey !== undefined && !isAppleKey(shape.applePrivateKey)) {
    invalid('apple.privateKey', 'is not a P-256 private key (PEM PKCS#8)')
  }
  if (issuer !== null && provider === 'microsoft') {
    if (!isMicrosoftDirectory(issuer)) {
      invalid('issuer', 'a directory id, common or organizations for microsoft')
    }
  } else if (issuer !== null) {
    if (provider !== 'oidc' && provider !== 'gitlab') invalid('issuer', `is not for ${provider}`)
    checkUrl(deps, 'issuer', issuer, false)
  } else if (provider === 'oidc') {
    invalid('issuer', 'is required for oidc')
  }
  const required =
    provider === 'oauth2'
      ? (['authorizationUrl', 'tokenUrl', 'userinfoUrl'] as const)
      : provider === 'github'
        ? (['authorizationUrl', 'tokenUrl', 'apiUrl'] as const)
        : undefined
  if (endpoints !== null) {
    if (!required) invalid('endpoints', `is not for ${provider}`)
    for (const [key, url] of Object.entries(endpoints)) {
      if (url !== undefined) checkUrl(deps, `endpoints.${key}`, url)
    }
    for (const key of required) {
      if (!endpoints[key]) invalid(`endpoints.${key}`, `is required for ${provider}`)
    }
    if (provider === 'github' && endpoints.userinfoUrl) {
      invalid('endpoints.userinfoUrl', 'is not for github (its apiUrl is read)')
    }
  } else if (provider === 'oauth2') {
    invalid('endpoints', 'is required for oauth2')
  }
  if (claims !== null && provider !== 'oauth2') invalid('claims', `is only for oauth2`)
}

async function findOr404(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findSocialConnection(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return row
}

/** What a key may change: the fields that decide nothing about who signs in. */
const KEY_FIELDS = new Set(['name', 'enabled', 'order'])

export async function createSocialConnection(
  deps: ConnectionDeps,
  tenant: TenantRef,
  input: CreateSocialConnectionBody,
  actor: Actor,
) {
  if (actor.type === 'apiKey') {
    fail('api_key_not_allowed', {
      message:
        "An API key cannot create a social connection: a connection can sign in the tenant's users. An Admin's token can.",
    })
  }
  checkShape(deps, {
    provider: input.provider,
    clientSecret: input.clientSecret !== undefined,
    apple: input.apple !== undefined,
    applePrivateKey: input.apple?.privateKey,
    issuer: input.issuer ?? null,
    endpoints: input.endpoints ?? null,
    claims: input.claims ?? null,
  })
  const now = deps.clock.now()
  const id = uuidv7(now.getTime())
  const name = input.name ?? PRESETS[input.provider].label
  const row = await deps.db.transaction(async (tx) => {
    const created = await store.insertSocialConnection(tx, {
      tenantId: tenant.id,
      id,
      provider: input.provider,
      name,
      clientId: input.clientId,
      clientSecretEnc:
        input.clientSecret === undefined
          ? null
          : sealSocialSecret(deps.cipher, tenant.id, id, input.clientSecret),
      appleTeamId: input.apple?.teamId ?? null,
      appleKeyId: input.apple?.keyId ?? null,
      applePrivateKeyEnc: input.apple
        ? sealAppleKey(deps.cipher, tenant.id, id, input.apple.privateKey)
        : null,
      scopes: input.scopes ?? null,
      enabled: input.enabled ?? true,
      allowSignUp: input.allowSignUp ?? true,
      linkByVerifiedEmail: input.linkByVerifiedEmail ?? true,
      sortOrder: input.order ?? 0,
      issuer: input.issuer ?? null,
      endpoints: input.endpoints ?? null,
      claims: input.claims ?? null,
      createdAt: now,
      updatedAt: now,
    })
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'SocialConnectionCreated',
        metadata: { connectionId: id, provider: input.provider, name },
      },
    ])
    return created
  })
  return { connection: presentSocialConnection(deps, tenant.slug, row) }
}

export async function listSocialConnectionPage(
  deps: Pick<Deps, 'config' | 'db'>,
  tenant: TenantRef,
  query: PageQuery,
) {
  const page = await readPage(
    query,
    ({ limit, after }) => store.listSocialConnections(deps.db, tenant.id, { limit, after }),
    (row) => presentSocialConnection(deps, tenant.slug, row),
  )
  return page
}

export async function getSocialConnection(
  deps: Pick<Deps, 'config' | 'db'>,
  tenant: TenantRef,
  id: string,
) {
  return {
    connection: presentSocialConnection(deps, tenant.slug, await findOr404(deps, tenant.id, id)),
  }
}

export async function updateSocialConnection(
  deps: ConnectionDeps,
  tenant: TenantRef,
  id: string,
  input: PatchSocialConnectionBody,
  actor: Actor,
) {
  const changed = Object.keys(input).filter(
    (key) => input[key as keyof PatchSocialConnectionBody] !== undefined,
  )
  if (actor.type === 'apiKey') {
    const named = changed.filter((key) => !KEY_FIELDS.has(key))
    if (named.length > 0) {
      fail('api_key_not_allowed', {
        message: `An API key cannot set what a social connection trusts (${named.join(', ')}): an Admin's token can.`,
      })
    }
  }
  const current = await findOr404(deps, tenant.id, id)
  checkShape(deps, {
    provider: current.provider,
    clientSecret: current.clientSecretEnc !== null || input.clientSecret !== undefined,
    apple: current.applePrivateKeyEnc !== null || input.apple !== undefined,
    applePrivateKey: input.apple?.privateKey,
    issuer: input.issuer === undefined ? current.issuer : input.issuer,
    endpoints: input.endpoints === undefined ? current.endpoints : input.endpoints,
    claims: input.claims === undefined ? current.claims : input.claims,
  })
  const now = deps.clock.now()
  const row = await deps.db.transaction(async (tx) => {
    const updated = await store.updateSocialConnection(tx, tenant.id, id, {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.clientId === undefined ? {} : { clientId: input.clientId }),
      // The secret is kept unless a new one is given.
      ...(input.clientSecret === undefined
        ? {}
        : { clientSecretEnc: sealSocialSecret(deps.cipher, tenant.id, id, input.clientSecret) }),
      ...(input.apple?.teamId === undefined ? {} : { appleTeamId: input.apple.teamId }),
      ...(input.apple?.keyId === undefined ? {} : { appleKeyId: input.apple.keyId }),
      ...(input.apple?.privateKey === undefined
        ? {}
        : {
            applePrivateKeyEnc: sealAppleKey(deps.cipher, tenant.id, id, input.apple.privateKey),
          }),
      ...(input.scopes === undefined ? {} : { scopes: input.scopes }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.allowSignUp === undefined ? {} : { allowSignUp: input.allowSignUp }),
      ...(input.linkByVerifiedEmail === undefined
        ? {}
        : { linkByVerifiedEmail: input.linkByVerifiedEmail }),
      ...(input.order === undefined ? {} : { sortOrder: input.order }),
      ...(input.issuer === undefined ? {} : { issuer: input.issuer }),
      ...(input.endpoints === undefined ? {} : { endpoints: input.endpoints }),
      ...(input.claims === undefined ? {} : { claims: input.claims }),
      updatedAt: now,
    })
    if (!updated) fail('not_found')
    await deps.audit.record(tx, tenant.id, actor, [
      { action: 'SocialConnectionUpdated', metadata: { connectionId: id, changed } },
    ])
    return updated
  })
  return { connection: presentSocialConnection(deps, tenant.slug, row) }
}

/** Deletes the connection; its identities go with it (the users stay). */
export async function deleteSocialConnection(
  deps: ConnectionDeps,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  await findOr404(deps, tenantId, id)
  await deps.db.transaction(async (tx) => {
    const deleted = await store.deleteSocialConnection(tx, tenantId, id)
    if (!deleted) fail('not_found')
    await deleteIdentitiesOf(tx, tenantId, 'social', id)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'SocialConnectionDeleted',
        metadata: { connectionId: id, provider: deleted.provider, name: deleted.name },
      },
    ])
  })
}

/** The tenant's enabled connections, in the buttons' order (the hosted sign-in page). */
export function enabledSocialConnections(deps: Pick<Deps, 'db'>, tenantId: string) {
  return store.listEnabledSocialConnections(deps.db, tenantId)
}
