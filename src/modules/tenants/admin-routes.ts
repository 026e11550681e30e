// GET/PATCH tenant, PUT/DELETE tenant/logo (admin or API key: CONTRACT §4), DELETE tenant
// (an Admin's token only: CONTRACT §9) and the public GET logo.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Principal } from '../../plugins/auth.ts'
import { errorResponses, Ok, responses, TenantSlugParams } from '../../schemas.ts'
import { deleteTenant } from './deletion.ts'
import { etagMatches, LOGO_BODY_LIMIT, putLogo, readLogo, removeLogo } from './logo.ts'
import { LOGO_MIME_TYPES } from './logo-image.ts'
import { LogoBody, LogoSaved, TenantDeleteBody, TenantPatchBody, TenantRecord } from './schemas.ts'
import { patchTenant, readTenant } from './settings.ts'

// Browsers may reuse a logo for five minutes, then revalidate it with its ETag.
const LOGO_CACHE_CONTROL = 'public, max-age=300'

export async function tenantAdminRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Administration']

  app.get(
    '/tenant',
    {
      config: { auth: 'admin', permission: 'tenant:read' },
      schema: {
        operationId: 'getTenant',
        tags,
        summary: 'The tenant record',
        params: TenantSlugParams,
        response: responses(TenantRecord, { 404: [] }),
      },
    },
    async (request) => readTenant(deps, request.tenant.id),
  )

  app.patch(
    '/tenant',
    {
      config: { auth: 'admin', permission: 'tenant:write' },
      schema: {
        operationId: 'updateTenant',
        tags,
        summary: "Change the tenant's settings",
        description:
          'Only the fields sent change. Audit: TenantUpdated with the changed fields. `idpOauthEnabled: true` without stored credentials is 400 `idp_not_configured`. A `branding.primaryColor` under 4.5:1 against white, or a `branding.backgroundColor` under 4.5:1 against the pages’ text, is 400 `insufficient_contrast` (CONTRACT §20).',
        params: TenantSlugParams,
        body: TenantPatchBody,
        response: responses(TenantRecord, {
          400: ['idp_not_configured', 'insufficient_contrast'],
          404: [],
        }),
      },
    },
    async (request) => patchTenant(deps, request.tenant.id, request.body, request.actor),
  )

  app.delete(
    '/tenant',
    {
      config: { auth: 'adminUser', permission: 'tenant:write' },
      schema: {
        operationId: 'deleteTenant',
        tags,
        summary: 'Close the workspace (no restore)',
        description:
          '`confirmSlug` must be the slug (else 400 `validation`). The admin confirms with its `password` (401 `invalid_credentials`) or, without a password, with a login code requested just before through auth/request-login-code as `code` (401 `invalid_code`); a failure counts in the sign-in budgets. Then every route of the tenant answers 404 `tenant_not_found` (other instances within 2 s), its invitations 401 `invalid_invite`, its sessions end; the slug stays taken until `npm run purge` removes the tenant and every row of it after USER_RETENTION_DAYS. Audit: TenantSoftDeleted. An API key gets 403 `api_key_not_allowed`, a Member 403 `admin_required`.',
        params: TenantSlugParams,
        body: TenantDeleteBody,
        response: responses(Ok, {
          400: [],
          401: ['invalid_credentials', 'invalid_code'],
          404: [],
        }),
      },
    },
    async (request) => {
      const { userId } = request.principal as Extract<Principal, { kind: 'user' }>
      await deleteTenant(deps, request.tenant, userId, request.body, request.actor)
      return { ok: true as const }
    },
  )

  app.put(
    '/tenant/logo',
    {
      config: { auth: 'admin', permission: 'tenant:write' },
      bodyLimit: LOGO_BODY_LIMIT,
      // After authentication, before the body is read: an oversized logo is refused
      // from its Content-Length (CONTRACT §2: the size is checked before decoding).
      onRequest: async (request: FastifyRequest) => {
        const length = Number(request.headers['content-length'] ?? 0)
        if (length > LOGO_BODY_LIMIT) {
          fail('invalid_logo', { message: 'The logo must be at most 512 KiB.' })
        }
      },
      schema: {
        operationId: 'setTenantLogo',
        tags,
        summary: 'Upload the tenant logo (PNG, JPEG or WebP, at most 512 KiB)',
        description:
          'The bytes must be a whole image of `mimeType` with nothing before or after it; else 400 `invalid_logo`.',
        params: TenantSlugParams,
        body: LogoBody,
        response: responses(LogoSaved, {
          400: ['invalid_logo'],
          404: [],
        }),
      },
    },
    async (request) => putLogo(deps, request.tenant, request.body, request.actor),
  )

  app.delete(
    '/tenant/logo',
    {
      config: { auth: 'admin', permission: 'tenant:write' },
      schema: {
        operationId: 'deleteTenantLogo',
        tags,
        summary: 'Remove the tenant logo',
        params: TenantSlugParams,
        response: responses(Ok, { 404: [] }),
      },
    },
    async (request) => {
      await removeLogo(deps, request.tenant, request.actor)
      return { ok: true as const }
    },
  )

  app.get(
    '/logo',
    {
      schema: {
        operationId: 'getTenantLogo',
        tags: ['Tenants'],
        summary: 'The tenant logo (public)',
        description:
          'The image bytes with their Content-Type, an ETag and `X-Content-Type-Options: nosniff`; 304 for a matching If-None-Match.',
        params: TenantSlugParams,
        response: {
          200: {
            description: 'The logo image',
            content: Object.fromEntries(
              LOGO_MIME_TYPES.map((m) => [m, { schema: { type: 'string', format: 'binary' } }]),
            ),
          },
          304: { description: 'Not modified', type: 'null' },
          ...errorResponses({ 404: ['not_found'] }),
        },
      },
    },
    async (request, reply) => {
      const logo = await readLogo(deps, request.tenant.id)
      reply
        .header('etag', logo.etag)
        .header('cache-control', LOGO_CACHE_CONTROL)
        .header('x-content-type-options', 'nosniff')
        // Opened directly, the bytes are still inert: no scripts, no plugins.
        .header('content-security-policy', "default-src 'none'; sandbox")
      if (etagMatches(request.headers['if-none-match'], logo.etag)) {
        // No body at all (RFC 9110 §15.4.5), not a serialized null.
        return reply.status(304).send(undefined as unknown as null)
      }
      return reply.type(logo.mimeType).send(logo.data)
    },
  )
}
