// The signed-in user's outside identities (CONTRACT §19): `GET /v1/{slug}/me/identities`
// lists them (the social connections', the SSO connections' and the SPEC identity
// provider's), `DELETE /v1/{slug}/me/identities/{id}` removes one, unless it is the account's
// last way in (no password, no passkey, no other identity: 409 last_sign_in_method).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { Deps } from '../../../deps.ts'
import { fail } from '../../../lib/errors.ts'
import { isUuid } from '../../../lib/ids.ts'
import type { Principal } from '../../../plugins/auth.ts'
import { DateTime, Ok, ResourceParams, responses, TenantSlugParams } from '../../../schemas.ts'
import { listPasskeys } from '../../passkeys/credentials.ts'
import { requireRecentAuthentication } from '../../stepup/recent.ts'
import { findUserById } from '../../users/reads.ts'
import { deleteUserIdentity, listUserIdentities } from '../identities.ts'
import { findSocialConnection } from './queries.ts'

type UserPrincipal = Extract<Principal, { kind: 'user' }>

const IdentityItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  provider: Type.String({
    description: 'The social preset (google, github, …), or `sso` or `idp`.',
  }),
  connectionId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()], {
    description: 'The social or SSO connection; null for the SPEC identity provider.',
  }),
  email: Type.Union([Type.String(), Type.Null()]),
  linkedAt: DateTime,
})
const IdentityList = Type.Object({ items: Type.Array(IdentityItem) })

async function identitiesOf(deps: Pick<Deps, 'db'>, tenantId: string, userId: string) {
  const rows = await listUserIdentities(deps.db, tenantId, userId)
  const providers = new Map<string, string>()
  for (const row of rows) {
    if (row.kind !== 'social' || providers.has(row.source)) continue
    const connection = await findSocialConnection(deps.db, tenantId, row.source)
    if (connection) providers.set(row.source, connection.provider)
  }
  return rows.map((row) => ({
    id: row.id,
    provider: row.kind === 'social' ? (providers.get(row.source) ?? 'social') : row.kind,
    connectionId: row.kind === 'idp' ? null : row.source,
    email: row.email,
    linkedAt: row.createdAt.toISOString(),
  }))
}

export async function identityRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Identities']

  app.get(
    '/me/identities',
    {
      config: { auth: 'user' },
      schema: {
        operationId: 'listMyIdentities',
        tags,
        summary: 'The outside identities linked to the signed-in user, oldest first',
        params: TenantSlugParams,
        response: responses(IdentityList, { 404: [] }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      return { items: await identitiesOf(deps, request.tenant.id, principal.userId) }
    },
  )

  app.delete(
    '/me/identities/:id',
    {
      config: { auth: 'user', refusedToImpersonation: true },
      schema: {
        operationId: 'removeMyIdentity',
        tags,
        summary: 'Unlink one outside identity from the signed-in user',
        description:
          'Not the account’s last way to sign in: a user without a password, a passkey or another identity keeps this one (409 `last_sign_in_method`). It changes how the account signs in, so, as removing a passkey, it needs a session that proved a sign-in factor in the last 10 minutes (CONTRACT §16: else 401 `reauthentication_required`). Audited `IdentityUnlinked`.',
        params: ResourceParams,
        response: responses(Ok, {
          401: ['reauthentication_required'],
          404: ['not_found'],
          409: ['last_sign_in_method'],
        }),
      },
    },
    async (request) => {
      const principal = request.principal as UserPrincipal
      const { tenant } = request
      const { id } = request.params
      if (!isUuid(id)) fail('not_found')
      await requireRecentAuthentication(deps, tenant.id, principal)
      await deps.db.transaction(async (tx) => {
        const user = await findUserById(tx, tenant.id, principal.userId)
        if (!user) fail('not_found')
        const all = await listUserIdentities(tx, tenant.id, user.id)
        const identity = all.find((row) => row.id === id)
        if (!identity) fail('not_found')
        const others = all.length > 1
        const passkeys = (await listPasskeys(tx, tenant.id, user.id)).length > 0
        if (!user.passwordHash && !passkeys && !others) fail('last_sign_in_method')
        if (!(await deleteUserIdentity(tx, tenant.id, user.id, id))) fail('not_found')
        const provider =
          identity.kind === 'social'
            ? (await findSocialConnection(tx, tenant.id, identity.source))?.provider
            : identity.kind
        await deps.audit.record(tx, tenant.id, request.actor, [
          {
            action: 'IdentityUnlinked',
            userId: user.id,
            email: user.emailNormalized,
            metadata: {
              identityId: id,
              ...(identity.kind === 'idp' ? {} : { connectionId: identity.source }),
              ...(provider ? { provider } : {}),
            },
          },
        ])
      })
      return { ok: true as const }
    },
  )
}
