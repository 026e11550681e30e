// SCIM 2.0 at {PUBLIC_URL}/scim/v2/{tenantSlug}/ (CONTRACT §14, RFC 7643/7644), registered
// under the prefix /scim/v2. Every route takes only an API key of the tenant as its bearer
// (auth 'apiKey': a user token or none is 401) and so counts against ADMIN_REQUESTS like
// the admin API. This plugin is encapsulated with its own body type (application/scim+json,
// plain JSON too), its own error handler and not-found handler, so everything under
// /scim/v2/ answers in SCIM's error schema: the unknown tenant's 404 and the 401s of the
// service's hooks included. The routes are left out of the OpenAPI document: SCIM clients
// read the discovery endpoints instead.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Deps } from '../../deps.ts'
import { toAppError } from '../../plugins/errors.ts'
import { listOf, serviceProviderConfig, userResourceType, userSchema } from './discovery.ts'
import {
  fromAppError,
  invalidFilter,
  notFound,
  SCIM_CONTENT_TYPE,
  ScimError,
  sendScimError,
} from './errors.ts'
import { toScimUser, USER_SCHEMA } from './resource.ts'
import {
  baseUrl,
  deprovisionUser,
  getScimUser,
  type ListQuery,
  listScimUsers,
  patchUser,
  provisionUser,
  replaceUser,
} from './service.ts'

type IdRequest = FastifyRequest<{ Params: { tenantSlug: string; id: string } }>

export async function scimRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  fastify.addContentTypeParser(
    'application/scim+json',
    { parseAs: 'string' },
    fastify.getDefaultJsonParser('error', 'error'),
  )
  fastify.setErrorHandler((error: FastifyError, request, reply) =>
    sendScimError(
      reply,
      error instanceof ScimError ? error : fromAppError(toAppError(error, request)),
    ),
  )
  fastify.setNotFoundHandler((_request, reply) => sendScimError(reply, notFound('No such route.')))

  const config = { auth: 'apiKey' as const }
  const schema = { hide: true }
  const base = (request: FastifyRequest) => baseUrl(deps, request.tenant)
  const send = (reply: FastifyReply, status: number, body: unknown) =>
    reply.status(status).type(SCIM_CONTENT_TYPE).send(body)
  const sendUser = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    user: Parameters<typeof toScimUser>[0],
  ) => {
    const resource = toScimUser(user, base(request))
    reply.header('etag', resource.meta.version)
    if (status === 201) reply.header('location', resource.meta.location)
    return send(reply, status, resource)
  }
  const ifMatch = (request: FastifyRequest) => {
    const value = request.headers['if-match']
    return Array.isArray(value) ? value.join(',') : value
  }

  fastify.get('/:tenantSlug/ServiceProviderConfig', { config, schema }, (request, reply) =>
    send(reply, 200, serviceProviderConfig(base(request))),
  )
  fastify.get('/:tenantSlug/ResourceTypes', { config, schema }, (request, reply) =>
    send(reply, 200, listOf([userResourceType(base(request))])),
  )
  fastify.get('/:tenantSlug/ResourceTypes/:id', { config, schema }, (request: IdRequest, reply) => {
    if (request.params.id !== 'User') throw notFound('No such resource type.')
    return send(reply, 200, userResourceType(base(request)))
  })
  fastify.get('/:tenantSlug/Schemas', { config, schema }, (request, reply) =>
    send(reply, 200, listOf([userSchema(base(request))])),
  )
  fastify.get('/:tenantSlug/Schemas/:id', { config, schema }, (request: IdRequest, reply) => {
    if (request.params.id !== USER_SCHEMA) throw notFound('No such schema.')
    return send(reply, 200, userSchema(base(request)))
  })

  fastify.get('/:tenantSlug/Users', { config, schema }, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const read = (name: string) => {
      const value = query[name]
      if (value === undefined || typeof value === 'string') return value
      throw name === 'filter'
        ? invalidFilter('Give one filter.')
        : new ScimError(400, `Give one ${name}.`, { scimType: 'invalidValue' })
    }
    const list: ListQuery = {
      filter: read('filter'),
      startIndex: read('startIndex'),
      count: read('count'),
    }
    return send(reply, 200, await listScimUsers(deps, request.tenant, list))
  })

  fastify.post('/:tenantSlug/Users', { config, schema }, async (request, reply) => {
    const user = await provisionUser(deps, request.tenant, request.body, request.actor)
    return sendUser(request, reply, 201, user)
  })

  fastify.get('/:tenantSlug/Users/:id', { config, schema }, async (request: IdRequest, reply) => {
    const user = await getScimUser(deps, request.tenant, request.params.id)
    return sendUser(request, reply, 200, user)
  })

  fastify.put('/:tenantSlug/Users/:id', { config, schema }, async (request: IdRequest, reply) => {
    const { tenant, params, body, actor } = request
    const user = await replaceUser(deps, tenant, params.id, body, actor, ifMatch(request))
    return sendUser(request, reply, 200, user)
  })

  fastify.patch('/:tenantSlug/Users/:id', { config, schema }, async (request: IdRequest, reply) => {
    const { tenant, params, body, actor } = request
    const user = await patchUser(deps, tenant, params.id, body, actor, ifMatch(request))
    return sendUser(request, reply, 200, user)
  })

  fastify.delete(
    '/:tenantSlug/Users/:id',
    { config, schema },
    async (request: IdRequest, reply) => {
      const { tenant, params, actor } = request
      await deprovisionUser(deps, tenant, params.id, actor, ifMatch(request))
      return reply.status(204).send()
    },
  )
}
