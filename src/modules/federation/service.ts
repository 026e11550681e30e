// SSO connections (CONTRACT §12): the admin API. An Admin's token or an API key creates,
// lists, reads, changes and deletes them, each change audited in its transaction. Every
// rule is checked before anything is written: domains (domains.ts), the OIDC issuer, the
// SAML fields or metadata (saml-metadata.ts), and the one block the type needs. A domain
// belongs to one connection of the tenant, decided by sso_domains' primary key.
import { X509Certificate } from 'node:crypto'
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import type { Actor } from '../audit/recorder.ts'
import { holdOrganization } from '../organizations/jit.ts'
import { resolveRoleNames } from '../roles/grant.ts'
import { findRolesByIds, type Role } from '../roles/members.ts'
import { MEMBER_ROLE, type Permission } from '../roles/permissions.ts'
import { type Caller, refuseEscalation } from '../roles/service.ts'
import { normalizeDomain } from './domains.ts'
import { checkUrl, invalid } from './input.ts'
import * as store from './queries.ts'
import { MetadataError, parseIdpMetadata } from './saml-metadata.ts'
import type { ConnectionRecord, CreateConnectionBody, PatchConnectionBody } from './schemas.ts'
import { sealSsoSecret } from './secret.ts'

type ConnectionDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db'>

/** Asked when a connection names none; `openid` is always added. */
export const DEFAULT_OIDC_SCOPES = ['openid', 'email', 'profile']

const base = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  `${deps.config.publicUrl}/v1/${slug}/sso/${id}`

/** CONTRACT §12: the redirect URI an OIDC connection registers at its IdP. */
export const oidcRedirectUri = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  `${base(deps, slug, id)}/oidc/callback`
/** CONTRACT §12: our SAML entityID for a connection. */
export const samlEntityId = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  base(deps, slug, id)
/** CONTRACT §12: our Assertion Consumer Service for a connection (HTTP-POST). */
export const samlAcsUrl = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  `${base(deps, slug, id)}/saml/acs`
/** CONTRACT §12: our SP metadata for a connection. */
export const samlMetadataUrl = (deps: Pick<Deps, 'config'>, slug: string, id: string) =>
  `${deps.config.publicUrl}/v1/${slug}/sso-connections/${id}/saml/metadata`

export function presentConnection(
  deps: Pick<Deps, 'config'>,
  slug: string,
  row: store.SsoConnection,
  roleNames: ReadonlyMap<string, string> = new Map(),
): ConnectionRecord {
  const hasClientSecret = row.oidcClientSecretEnc !== null
  // A deleted role's id names nothing: the rule shows (and gives) the roles still there.
  const roleMapping = row.roleMapping.map((rule) => ({
    claim: rule.claim,
    value: rule.value,
    roles: rule.roleIds
      .map((id) => roleNames.get(id))
      .filter((name): name is string => name !== undefined)
      .sort(),
  }))
  return {
    id: row.id,
    name: row.name,
    type: row.type as ConnectionRecord['type'],
    domains: row.domains,
    enabled: row.enabled,
    jitProvisioning: row.jitProvisioning,
    defaultRole: row.defaultRole as ConnectionRecord['defaultRole'],
    enforce: row.enforce,
    mfaSatisfied: row.mfaSatisfied,
    hasClientSecret,
    roleMapping,
    organizationId: row.organizationId,
    oidc:
      row.type === 'oidc'
        ? {
            issuer: row.oidcIssuer ?? '',
            clientId: row.oidcClientId ?? '',
            scopes: row.oidcScopes ?? DEFAULT_OIDC_SCOPES,
            hasClientSecret,
            redirectUri: oidcRedirectUri(deps, slug, row.id),
          }
        : null,
    saml:
      row.type === 'saml'
        ? {
            idpEntityId: row.samlIdpEntityId ?? '',
            idpSsoUrl: row.samlIdpSsoUrl ?? '',
            idpCertificates: row.samlIdpCertificates ?? [],
            spEntityId: samlEntityId(deps, slug, row.id),
            acsUrl: samlAcsUrl(deps, slug, row.id),
            metadataUrl: samlMetadataUrl(deps, slug, row.id),
          }
        : null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

/** The names of the roles the connections' roleMapping rules name, by id. */
async function roleNamesOf(db: Handle, tenantId: string, rows: store.SsoConnection[]) {
  const ids = [...new Set(rows.flatMap((r) => r.roleMapping.flatMap((m) => m.roleIds)))]
  return new Map((await findRolesByIds(db, tenantId, ids)).map((r) => [r.id, r.name]))
}

/**
 * A roleMapping as sent, checked: every role a tenant role of the tenant (400 validation
 * naming it), and the caller holding every permission and scope of them (no escalation,
 * CONTRACT §17: the mapping grants them). Answers the rules with role ids.
 */
async function checkRoleMapping(
  tx: Handle,
  tenantId: string,
  rules: NonNullable<CreateConnectionBody['roleMapping']>,
  caller: Caller,
) {
  const checked: store.SsoConnection['roleMapping'] = []
  const granted: Role[] = []
  for (const [i, rule] of rules.entries()) {
    const resolved = await resolveRoleNames(tx, tenantId, rule.roles)
    if ('unknown' in resolved) {
      invalid(
        `roleMapping.${i}.roles.${resolved.unknown}`,
        `unknown role ${rule.roles[resolved.unknown]}`,
      )
    }
    granted.push(...resolved.roles)
    checked.push({ claim: rule.claim, value: rule.value, roleIds: resolved.roles.map((r) => r.id) })
  }
  await refuseEscalation(tx, tenantId, caller, granted)
  return checked
}

/**
 * The organization a connection's sign-ins join (CONTRACT §18), checked as the other names
 * a connection holds are (roleMapping's roles): one of the tenant's, else 400 validation at
 * `organizationId` (another tenant's is no different from an unknown one, so nothing tells
 * them apart); its row held until the change commits (a deletion meanwhile waits, then
 * nulls the reference). No escalation (CONTRACT §17): the sign-ins give its `jit.roles`, so
 * the caller must hold every scope of them, as for a roleMapping.
 */
async function checkOrganization(
  tx: Handle,
  tenantId: string,
  organizationId: string | null | undefined,
  caller: Caller,
) {
  if (!organizationId) return
  const organization = isUuid(organizationId)
    ? await holdOrganization(tx, tenantId, organizationId)
    : undefined
  if (!organization) invalid('organizationId', 'no organization of this workspace')
  const roles = await findRolesByIds(tx, tenantId, organization.jitRoleIds)
  await refuseEscalation(
    tx,
    tenantId,
    caller,
    roles.filter((r) => r.kind === 'organization'),
  )
}

/** Each domain folded (domains.ts); duplicates after folding collapse into one. */
function checkDomains(domains: string[]): string[] {
  const folded = domains.map(
    (d, i) =>
      normalizeDomain(d) ?? invalid(`domains.${i}`, 'not a domain name of two labels or more'),
  )
  return [...new Set(folded)]
}

/** PEM certificates, each parsed; answered in their canonical PEM. */
function checkCertificates(certificates: string[], path: string): string[] {
  if (certificates.length === 0) invalid(path, 'at least one certificate is required')
  return certificates.map((pem, i) => {
    try {
      if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('not PEM')
      return new X509Certificate(pem).toString().trim()
    } catch {
      return invalid(`${path}.${i}`, 'not an X.509 certificate in PEM')
    }
  })
}

type SamlFields = { samlIdpEntityId: string; samlIdpSsoUrl: string; samlIdpCertificates: string[] }

/**
 * The SAML block: `{idpMetadataXml}` alone, or fields. On create all three fields are
 * needed; on patch the given ones are merged into `current`.
 */
function samlFields(
  deps: Pick<Deps, 'config'>,
  saml: NonNullable<CreateConnectionBody['saml']>,
  current: SamlFields | undefined,
): SamlFields {
  const { idpMetadataXml, idpEntityId, idpSsoUrl, idpCertificates } = saml
  if (idpMetadataXml !== undefined) {
    if (idpEntityId !== undefined || idpSsoUrl !== undefined || idpCertificates !== undefined) {
      invalid('saml', 'send idpMetadataXml alone, or the fields without it')
    }
    let parsed: ReturnType<typeof parseIdpMetadata>
    try {
      parsed = parseIdpMetadata(idpMetadataXml)
    } catch (error) {
      if (error instanceof MetadataError) invalid('saml.idpMetadataXml', error.message)
      throw error
    }
    checkUrl(deps, 'saml.idpMetadataXml', parsed.idpSsoUrl)
    return {
      samlIdpEntityId: parsed.idpEntityId,
      samlIdpSsoUrl: parsed.idpSsoUrl,
      samlIdpCertificates: checkCertificates(parsed.idpCertificates, 'saml.idpMetadataXml'),
    }
  }
  if (!current) {
    if (idpEntityId === undefined) invalid('saml.idpEntityId', 'is required')
    if (idpSsoUrl === undefined) invalid('saml.idpSsoUrl', 'is required')
    if (idpCertificates === undefined) invalid('saml.idpCertificates', 'is required')
  }
  if (idpSsoUrl !== undefined) checkUrl(deps, 'saml.idpSsoUrl', idpSsoUrl)
  return {
    samlIdpEntityId: idpEntityId ?? (current as SamlFields).samlIdpEntityId,
    samlIdpSsoUrl: idpSsoUrl ?? (current as SamlFields).samlIdpSsoUrl,
    samlIdpCertificates:
      idpCertificates === undefined
        ? (current as SamlFields).samlIdpCertificates
        : checkCertificates(idpCertificates, 'saml.idpCertificates'),
  }
}

function oidcScopes(scopes: string[] | undefined): string[] | undefined {
  if (scopes === undefined) return undefined
  return scopes.includes('openid') ? scopes : ['openid', ...scopes]
}

async function findOr404(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findConnection(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return row
}

/**
 * What a connection trusts, and so who it signs in: an identity provider (its issuer, its
 * certificates), the domains it owns, the role of the users it creates and whether it
 * vouches for their second factor. A connection made or re-aimed by an API key would sign
 * in as any user of its domains, Admins and users with a second factor included, and so take
 * them over (issue 36, F1's rule: no machine credential replaces the credential of a user who
 * holds more power than the key may grant; CONTRACT §4 refuses keys on the idp credentials
 * for the same reason). So a key creates none, and changes only a connection's name, `enabled`
 * and `enforce`; deleting is open to it.
 */
const TRUST_FIELDS = [
  'oidc',
  'saml',
  'domains',
  'defaultRole',
  'mfaSatisfied',
  'jitProvisioning',
  'roleMapping',
  'organizationId',
] as const

function refuseTrustByKey(
  actor: Actor,
  input: Partial<Record<(typeof TRUST_FIELDS)[number], unknown>>,
) {
  if (actor.type !== 'apiKey') return
  const named = TRUST_FIELDS.filter((field) => input[field] !== undefined)
  if (named.length > 0) {
    fail('api_key_not_allowed', {
      message: `An API key cannot set what an SSO connection trusts (${named.join(', ')}): an Admin's token can.`,
    })
  }
}

export async function createConnection(
  deps: ConnectionDeps,
  tenant: { id: string; slug: string },
  input: CreateConnectionBody,
  actor: Actor,
  permissions: readonly Permission[] = [],
) {
  if (actor.type === 'apiKey') {
    fail('api_key_not_allowed', {
      message:
        "An API key cannot create an SSO connection: a connection signs in every user of its domains. An Admin's token can.",
    })
  }
  const domains = checkDomains(input.domains)
  if (input.type === 'oidc') {
    if (!input.oidc) invalid('oidc', 'is required for type oidc')
    if (input.saml) invalid('saml', 'is only for type saml')
    checkUrl(deps, 'oidc.issuer', input.oidc.issuer, false)
  } else {
    if (!input.saml) invalid('saml', 'is required for type saml')
    if (input.oidc) invalid('oidc', 'is only for type oidc')
  }
  const saml = input.saml ? samlFields(deps, input.saml, undefined) : undefined
  const now = deps.clock.now()
  const id = uuidv7(now.getTime())
  const row = await deps.db.transaction(async (tx) => {
    const roleMapping = await checkRoleMapping(tx, tenant.id, input.roleMapping ?? [], {
      actor,
      permissions,
    })
    await checkOrganization(tx, tenant.id, input.organizationId, { actor, permissions })
    const created = await store.insertConnection(tx, {
      roleMapping,
      organizationId: input.organizationId ?? null,
      tenantId: tenant.id,
      id,
      name: input.name,
      type: input.type,
      domains,
      enabled: input.enabled ?? true,
      jitProvisioning: input.jitProvisioning ?? true,
      defaultRole: input.defaultRole ?? MEMBER_ROLE,
      enforce: input.enforce ?? false,
      mfaSatisfied: input.mfaSatisfied ?? false,
      ...(input.oidc
        ? {
            oidcIssuer: input.oidc.issuer,
            oidcClientId: input.oidc.clientId,
            oidcScopes: oidcScopes(input.oidc.scopes) ?? DEFAULT_OIDC_SCOPES,
            oidcClientSecretEnc: sealSsoSecret(deps.cipher, tenant.id, id, input.oidc.clientSecret),
          }
        : {}),
      ...(saml ?? {}),
      createdAt: now,
      updatedAt: now,
    })
    if (!(await store.claimDomains(tx, tenant.id, id, domains))) fail('domain_taken')
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'SsoConnectionCreated',
        metadata: { connectionId: id, name: input.name, type: input.type, domains },
      },
    ])
    return created
  })
  const names = await roleNamesOf(deps.db, tenant.id, [row])
  return { connection: presentConnection(deps, tenant.slug, row, names) }
}

export async function listConnectionPage(
  deps: Pick<Deps, 'config' | 'db'>,
  tenant: { id: string; slug: string },
  query: PageQuery,
) {
  const page = await readPage(
    query,
    ({ limit, after }) => store.listConnections(deps.db, tenant.id, { limit, after }),
    (row) => row,
  )
  const names = await roleNamesOf(deps.db, tenant.id, page.items)
  return {
    items: page.items.map((row) => presentConnection(deps, tenant.slug, row, names)),
    nextCursor: page.nextCursor,
  }
}

export async function getConnection(
  deps: Pick<Deps, 'config' | 'db'>,
  tenant: { id: string; slug: string },
  id: string,
) {
  const row = await findOr404(deps, tenant.id, id)
  const names = await roleNamesOf(deps.db, tenant.id, [row])
  return { connection: presentConnection(deps, tenant.slug, row, names) }
}

export async function updateConnection(
  deps: ConnectionDeps,
  tenant: { id: string; slug: string },
  id: string,
  input: PatchConnectionBody,
  actor: Actor,
  permissions: readonly Permission[] = [],
) {
  refuseTrustByKey(actor, input)
  const current = await findOr404(deps, tenant.id, id)
  const domains = input.domains === undefined ? undefined : checkDomains(input.domains)
  if (input.oidc && current.type !== 'oidc') invalid('oidc', 'is only for type oidc')
  if (input.saml && current.type !== 'saml') invalid('saml', 'is only for type saml')
  if (input.oidc?.issuer !== undefined) checkUrl(deps, 'oidc.issuer', input.oidc.issuer, false)
  const saml = input.saml
    ? samlFields(deps, input.saml, {
        samlIdpEntityId: current.samlIdpEntityId ?? '',
        samlIdpSsoUrl: current.samlIdpSsoUrl ?? '',
        samlIdpCertificates: current.samlIdpCertificates ?? [],
      })
    : undefined
  const { oidc } = input
  const now = deps.clock.now()
  const row = await deps.db.transaction(async (tx) => {
    const roleMapping =
      input.roleMapping === undefined
        ? undefined
        : await checkRoleMapping(tx, tenant.id, input.roleMapping, { actor, permissions })
    await checkOrganization(tx, tenant.id, input.organizationId, { actor, permissions })
    const updated = await store.updateConnection(tx, tenant.id, id, {
      ...(roleMapping === undefined ? {} : { roleMapping }),
      ...(input.organizationId === undefined ? {} : { organizationId: input.organizationId }),
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(domains === undefined ? {} : { domains }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.jitProvisioning === undefined ? {} : { jitProvisioning: input.jitProvisioning }),
      ...(input.defaultRole === undefined ? {} : { defaultRole: input.defaultRole }),
      ...(input.enforce === undefined ? {} : { enforce: input.enforce }),
      ...(input.mfaSatisfied === undefined ? {} : { mfaSatisfied: input.mfaSatisfied }),
      ...(oidc?.issuer === undefined ? {} : { oidcIssuer: oidc.issuer }),
      ...(oidc?.clientId === undefined ? {} : { oidcClientId: oidc.clientId }),
      ...(oidc?.scopes === undefined ? {} : { oidcScopes: oidcScopes(oidc.scopes) }),
      // The secret is kept unless a new one is given (CONTRACT §12).
      ...(oidc?.clientSecret === undefined
        ? {}
        : { oidcClientSecretEnc: sealSsoSecret(deps.cipher, tenant.id, id, oidc.clientSecret) }),
      ...(saml ?? {}),
      updatedAt: now,
    })
    if (!updated) fail('not_found')
    if (domains !== undefined && !(await store.claimDomains(tx, tenant.id, id, domains))) {
      fail('domain_taken')
    }
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'SsoConnectionUpdated',
        metadata: { connectionId: id, changed: Object.keys(input) },
      },
    ])
    return updated
  })
  const names = await roleNamesOf(deps.db, tenant.id, [row])
  return { connection: presentConnection(deps, tenant.slug, row, names) }
}

export async function deleteConnection(
  deps: ConnectionDeps,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  await findOr404(deps, tenantId, id)
  await deps.db.transaction(async (tx) => {
    const deleted = await store.deleteConnection(tx, tenantId, id)
    if (!deleted) fail('not_found')
    // The connection's row goes first: its deletion waits for a sign-in holding it
    // (holdConnection) to commit its link, which this statement then sees and deletes; a
    // sign-in after it finds the connection gone and links nothing.
    await store.deleteIdentitiesOf(tx, tenantId, 'sso', id)
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'SsoConnectionDeleted',
        metadata: { connectionId: id, name: deleted.name, type: deleted.type },
      },
    ])
  })
}

/** The tenant's connection `id` (any state), for the hosted pages that start a sign-in. */
export function connectionById(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  return store.findConnection(deps.db, tenantId, id)
}

/** The tenant's connection owning `domain`, if any (enabled or not). */
export function connectionByDomain(deps: Pick<Deps, 'db'>, tenantId: string, domain: string) {
  return store.findConnectionByDomain(deps.db, tenantId, domain)
}

/** Whether the tenant has an enabled connection (the sign-in page offers "Sign in with SSO"). */
export function tenantHasSso(deps: Pick<Deps, 'db'>, tenantId: string): Promise<boolean> {
  return store.hasEnabledConnection(deps.db, tenantId)
}
