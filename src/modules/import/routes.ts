// POST users/import (CONTRACT §14; admin rules of §4: an Admin's token or an API key).
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { responses, TenantSlugParams } from '../../schemas.ts'
import { IMPORT_BODY_LIMIT, ImportAnswer, ImportBody } from './schemas.ts'
import { importUsers } from './service.ts'

export async function importRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/users/import',
    {
      config: { auth: 'admin', permission: 'users:write' },
      bodyLimit: IMPORT_BODY_LIMIT,
      schema: {
        operationId: 'importUsers',
        tags: ['Administration'],
        summary: 'Import users, with password hashes made by another system',
        description:
          'At most 1,000 users a request; bodies up to 2 MiB. A request that is not `{users: [1 to 1,000 user objects], hashConfig?, onConflict?}` with each field of its JSON type (more users, an unknown `onConflict`, a bad `hashConfig`, a number where a string is due) is 400 `validation` and nothing is created. Each user gets a result in `results`, by `index`: `created`, `updated` (with `onConflict: update`: the hash, `emailVerified` and the profile fields sent; role and status are left to PATCH users), `skipped` (`exists`, or `duplicate_in_batch` for a second row with an address already in the batch) or `error` (`invalid_email` for an address outside the rules of `email`; `validation` for any other field outside its rule: a length, a role or status, a `createdAt`; `unsupported_hash`; `hash_too_expensive` beyond bcrypt cost 14, PBKDF2 2,000,000 iterations, scrypt or argon2 128 MiB, argon2 t 10, Firebase rounds 8 or memCost 14, never tried; `api_key_not_allowed` for role Admin with an API key; `permission_required` for role Admin from a caller who is no Admin, or for `roles` holding a permission or resource scope the caller lacks). An imported hash is checked at sign-in and replaced by argon2id on the first success. Audit: UserImported per created or updated user.',
        params: TenantSlugParams,
        body: ImportBody,
        response: responses(ImportAnswer, { 400: [], 404: [] }),
      },
    },
    async (request) =>
      importUsers(
        deps,
        request.tenant.id,
        request.body,
        request.actor,
        request.baseRoleAuthority,
        request.permissions,
      ),
  )
}
