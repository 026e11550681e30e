// Applications (CONTRACT §11): the tenant's OAuth clients. Created, listed, edited and
// deleted by an Admin or an API key, each change audited in its transaction. Web and
// machine apps get a secret, shown once and stored sealed; rotating it replaces it at once
// (the provider reads the client from this table on every request, so the old secret fails
// from the next one). Deleting an application revokes its grants and tokens.
import { databaseFailure } from '../../db/errors.ts'
import type { SamlSettings } from '../../db/schema.ts'
import type { Deps } from '../../deps.ts'
import { randomToken } from '../../lib/crypto.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import type { Actor } from '../audit/recorder.ts'
import { deleteClientModels } from '../oidc/grants.ts'
import { presentSamlSettings, resolveSamlSettings } from '../samlidp/settings.ts'
import {
  CLIENT_AUTH_INPUT_KEYS,
  type ClientAuthColumns,
  NO_CLIENT_AUTH,
  presentClientAuth,
  resolveClientAuth,
} from './client-auth.ts'
import * as store from './queries.ts'
import { checkUris } from './redirect-uris.ts'
import {
  type ApplicationRecord,
  type ApplicationType,
  type CreateApplicationBody,
  type PatchApplicationBody,
  SAML_INPUT_KEYS,
} from './schemas.ts'
import { hasSecret, newSecret, sealSecret } from './secret.ts'

type AppDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'config'>

const uriOptions = (deps: AppDeps) => ({
  allowLoopback: deps.config.oidcBackchannelAllowLoopback,
})

export function presentApplication(row: store.Application): ApplicationRecord {
  return {
    id: row.id,
    clientId: row.clientId,
    name: row.name,
    type: row.type as ApplicationType,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    backchannelLogoutUri: row.backchannelLogoutUri,
    firstParty: row.firstParty,
    allowedScopes: row.allowedScopes,
    dynamic: row.dynamic,
    ...presentClientAuth(row),
    saml: row.type === 'saml' && row.saml ? presentSamlSettings(row.saml) : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** What an application is made of, however it came (the admin API, dynamic registration). */
export interface NewApplication {
  clientId: string
  name: string
  type: ApplicationType
  redirectUris: string[]
  postLogoutRedirectUris: string[]
  backchannelLogoutUri: string | null
  firstParty: boolean
  allowedScopes: string[]
  /** Registered by the client itself (RFC 7591), not by an admin. */
  dynamic?: boolean
  /** Its secret, sealed into the row; none for a public client. */
  secret?: string
  /** CONTRACT §22 (client-auth.ts); NO_CLIENT_AUTH's defaults when left out. */
  clientAuth?: ClientAuthColumns
  /** CONTRACT §22, SAML IdP: a saml application's service provider. */
  saml?: SamlSettings
}

/**
 * CONTRACT §22: a saml application has none of the OAuth fields and the other types none
 * of the SAML ones; each field given to the wrong type is an issue.
 */
function checkFieldsOfType(type: ApplicationType, input: Record<string, unknown>): void {
  const samlKeys = new Set(SAML_INPUT_KEYS)
  const given = Object.keys(input).filter(
    (key) => input[key] !== undefined && !['name', 'type', 'firstParty'].includes(key),
  )
  const wrong =
    type === 'saml'
      ? given.filter((key) => !samlKeys.has(key))
      : given.filter((key) => samlKeys.has(key))
  if (wrong.length === 0) return
  const message = type === 'saml' ? 'not a field of a saml app' : 'only for saml apps'
  fail('validation', {
    details: { issues: wrong.map((key) => ({ path: `body.${key}`, message })) },
  })
}

const isUniqueViolation = (error: unknown) => databaseFailure(error)?.code === '23505'

/** Writes an application and its ApplicationCreated audit in one transaction. */
export async function insertAudited(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db'>,
  tenantId: string,
  actor: Actor,
  app: NewApplication,
): Promise<store.Application> {
  const now = deps.clock.now()
  const id = uuidv7(now.getTime())
  const { secret, clientAuth, saml, ...fields } = app
  return deps.db.transaction(async (tx) => {
    const created = await store.insertApplication(tx, {
      ...fields,
      ...(clientAuth ?? NO_CLIENT_AUTH),
      saml: saml ?? null,
      samlEntityId: saml?.entityId ?? null,
      tenantId,
      id,
      clientSecretEnc: secret ? sealSecret(deps.cipher, tenantId, id, secret) : null,
      createdAt: now,
      updatedAt: now,
    })
    const { clientId, name, type } = created
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApplicationCreated',
        metadata: {
          applicationId: id,
          clientId,
          name,
          type,
          ...(app.dynamic ? { dynamic: true } : {}),
        },
      },
    ])
    return created
  })
}

export async function createApplication(
  deps: AppDeps,
  tenantId: string,
  input: CreateApplicationBody,
  actor: Actor,
) {
  checkFieldsOfType(input.type, input)
  const saml = input.type === 'saml' ? resolveSamlSettings(input) : undefined
  checkUris(input.type, input, uriOptions(deps))
  const clientAuth = saml
    ? NO_CLIENT_AUTH
    : resolveClientAuth(input.type, NO_CLIENT_AUTH, input, uriOptions(deps))
  const secret = hasSecret(input.type) ? newSecret() : undefined
  const row = await insertAudited(deps, tenantId, actor, {
    // 128 random bits: unguessable, and unique across tenants (the column is unique).
    clientId: randomToken(16),
    name: input.name,
    type: input.type,
    redirectUris: input.redirectUris ?? [],
    postLogoutRedirectUris: input.postLogoutRedirectUris ?? [],
    backchannelLogoutUri: input.backchannelLogoutUri ?? null,
    firstParty: input.firstParty ?? true,
    allowedScopes: input.allowedScopes ?? [],
    secret,
    clientAuth,
    saml,
  }).catch((error) => {
    if (isUniqueViolation(error) && saml) fail('entity_id_taken')
    throw error
  })
  return {
    application: presentApplication(row),
    ...(secret ? { clientSecret: secret } : {}),
  }
}

export async function listApplicationPage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  query: PageQuery,
) {
  return readPage(
    query,
    ({ limit, after }) => store.listApplications(deps.db, tenantId, { limit, after }),
    presentApplication,
  )
}

export async function getApplication(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findApplication(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return { application: presentApplication(row) }
}

export async function updateApplication(
  deps: AppDeps,
  tenantId: string,
  id: string,
  input: PatchApplicationBody,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  return deps.db.transaction(async (tx) => {
    const current = await store.findApplication(tx, tenantId, id)
    if (!current) fail('not_found')
    const type = current.type as ApplicationType
    checkFieldsOfType(type, input)
    const saml = type === 'saml' ? resolveSamlSettings(input, current.saml ?? undefined) : undefined
    checkUris(type, input, uriOptions(deps))
    // CONTRACT §11, Consent: a client that registered itself is third-party for good.
    if (current.dynamic && input.firstParty === true) {
      fail('validation', {
        details: {
          issues: [
            {
              path: 'body.firstParty',
              message: 'a dynamically registered application is third-party',
            },
          ],
        },
      })
    }
    const clientAuth = saml ? {} : resolveClientAuth(type, current, input, uriOptions(deps))
    const authKeys = new Set<string>([...CLIENT_AUTH_INPUT_KEYS, ...SAML_INPUT_KEYS])
    const changes = Object.fromEntries(
      Object.entries(input).filter(([key, value]) => value !== undefined && !authKeys.has(key)),
    ) as Partial<store.NewApplication>
    const fields = Object.keys(input).filter(
      (key) => input[key as keyof PatchApplicationBody] !== undefined,
    )
    if (fields.length === 0) return { application: presentApplication(current) }
    const row = await store
      .updateApplication(tx, tenantId, id, {
        ...changes,
        ...clientAuth,
        ...(saml ? { saml, samlEntityId: saml.entityId } : {}),
        updatedAt: deps.clock.now(),
      })
      .catch((error) => {
        if (isUniqueViolation(error) && saml) fail('entity_id_taken')
        throw error
      })
    if (!row) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApplicationUpdated',
        metadata: { applicationId: id, clientId: row.clientId, changes: fields },
      },
    ])
    return { application: presentApplication(row) }
  })
}

/** A new secret for a web or machine app; the old one is refused from the next request on. */
export async function rotateApplicationSecret(
  deps: AppDeps,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  if (!isUuid(id)) fail('not_found')
  const secret = newSecret()
  await deps.db.transaction(async (tx) => {
    const current = await store.findApplication(tx, tenantId, id)
    if (!current) fail('not_found')
    if (!hasSecret(current.type)) {
      fail('validation', {
        message: 'Only web and machine applications have a client secret.',
        details: {
          issues: [{ path: 'params.id', message: `a ${current.type} app has no secret` }],
        },
      })
    }
    await store.updateApplication(tx, tenantId, id, {
      clientSecretEnc: sealSecret(deps.cipher, tenantId, id, secret),
      updatedAt: deps.clock.now(),
    })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApplicationSecretRotated',
        metadata: { applicationId: id, clientId: current.clientId },
      },
    ])
  })
  return { clientSecret: secret }
}

/** Deletes the application with every grant, code and opaque token issued to it. */
export async function deleteApplication(deps: AppDeps, tenantId: string, id: string, actor: Actor) {
  if (!isUuid(id)) fail('not_found')
  await deps.db.transaction(async (tx) => {
    const row = await store.deleteApplication(tx, tenantId, id)
    if (!row) fail('not_found')
    await deleteClientModels(tx, tenantId, row.clientId)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'ApplicationDeleted',
        metadata: { applicationId: id, clientId: row.clientId, name: row.name },
      },
    ])
  })
}
