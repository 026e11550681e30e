// auth/signup, auth/login, auth/refresh, auth/logout, auth/logout-all.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams, TokenEnvelope } from '../../schemas.ts'
import { loginWithPassword, signup } from './password.ts'
import { LoginBody, LogoutAllResult, RefreshBody, SignupBody } from './schemas.ts'

export async function sessionRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/auth/signup',
    {
      config: { rateLimit: 'signup' },
      schema: {
        tags: ['Authentication'],
        summary: 'Create an account with email and password',
        params: TenantSlugParams,
        body: SignupBody,
        response: responses(TokenEnvelope, 400, 404, 429),
      },
    },
    async (request) => signup(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/login',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'Sign in with email and password (and a second factor when asked)',
        params: TenantSlugParams,
        body: LoginBody,
        response: responses(TokenEnvelope, 400, 401, 404, 429),
      },
    },
    async (request) => loginWithPassword(deps, request.tenant, request.body, request.actor),
  )

  app.post(
    '/auth/refresh',
    {
      config: { rateLimit: 'tokenEndpoints' },
      schema: {
        tags: ['Authentication'],
        summary: 'Exchange a refresh token for a new pair (the old one is spent)',
        params: TenantSlugParams,
        body: RefreshBody,
        response: responses(TokenEnvelope, 400, 401, 404, 429),
      },
    },
    async (request) => {
      const { refreshToken } = request.body
      return deps.sessions.refresh(request.tenant, refreshToken, request.actor)
    },
  )

  app.post(
    '/auth/logout',
    {
      schema: {
        tags: ['Authentication'],
        summary: 'End the session of a refresh token',
        params: TenantSlugParams,
        body: RefreshBody,
        response: responses(Ok, 400, 404),
      },
    },
    async (request) => {
      const { refreshToken } = request.body
      await deps.sessions.logout(request.tenant, refreshToken, request.actor)
      return { ok: true as const }
    },
  )

  app.post(
    '/auth/logout-all',
    {
      config: { auth: 'user' },
      schema: {
        tags: ['Authentication'],
        summary: 'End every session of the signed-in user',
        security: [{ bearer: [] }],
        params: TenantSlugParams,
        response: responses(LogoutAllResult, 401, 404),
      },
    },
    async (request) => {
      const count = await deps.sessions.logoutAll(request.tenant, request.actor)
      return { ok: true as const, count }
    },
  )
}
