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
import {
  groupResourceType,
  groupSchema,
  listOf,
  serviceProviderConfig,
  userResourceType,
  userSchema,
} from './discovery.ts'
import {
  fromAppError,
  invalidFilter,
  notFound,
  SCIM_CONTENT_TYPE,
  ScimError,
  sendScimError,
} from './errors.ts'
import { GROUP_SCHEMA, toScimGroup } from './group-resource.ts'
import {
  deprovisionGroup,
  excludesMembers,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  provisionGroup,
  replaceGroup,
} from './groups.ts'
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
    send(reply, 200, listOf([userResourceType(base(request)), groupResourceType(base(request))])),
  )
  fastify.get('/:tenantSlug/ResourceTypes/:id', { config, schema }, (request: IdRequest, reply) => {
    const { id } = request.params
    if (id === 'User') return send(reply, 200, userResourceType(base(request)))
    if (id === 'Group') return send(reply, 200, groupResourceType(base(request)))
    throw notFound('No such resource type.')
  })
  fastify.get('/:tenantSlug/Schemas', { config, schema }, (request, reply) =>
    send(reply, 200, listOf([userSchema(base(request)), groupSchema(base(request))])),
  )
  fastify.get('/:tenantSlug/Schemas/:id', { config, schema }, (request: IdRequest, reply) => {
    const { id } = request.params
    if (id === USER_SCHEMA) return send(reply, 200, userSchema(base(request)))
    if (id === GROUP_SCHEMA) return send(reply, 200, groupSchema(base(request)))
    throw notFound('No such schema.')
  })

  const queryValue = (request: FastifyRequest, name: string) => {
    const value = (request.query as Record<string, unknown>)[name]
    if (value === undefined || typeof value === 'string') return value
    throw name === 'filter'
      ? invalidFilter('Give one filter.')
      : new ScimError(400, `Give one ${name}.`, { scimType: 'invalidValue' })
  }
  const listQuery = (request: FastifyRequest): ListQuery => ({
    filter: queryValue(request, 'filter'),
    startIndex: queryValue(request, 'startIndex'),
    count: queryValue(request, 'count'),
  })

  fastify.get('/:tenantSlug/Users', { config, schema }, async (request, reply) =>
    send(reply, 200, await listScimUsers(deps, request.tenant, listQuery(request))),
  )

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

  // Groups (CONTRACT §17): the groups module's rules, SCIM's shapes (groups.ts).
  const caller = (request: FastifyRequest) => ({
    actor: request.actor,
    permissions: request.permissions,
  })
  const sendGroup = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    view: Parameters<typeof toScimGroup>[0],
  ) => {
    const members = !excludesMembers(queryValue(request, 'excludedAttributes'))
    const resource = toScimGroup(view, base(request), { members })
    reply.header('etag', resource.meta.version)
    if (status === 201) reply.header('location', resource.meta.location)
    return send(reply, status, resource)
  }

  fastify.get('/:tenantSlug/Groups', { config, schema }, async (request, reply) => {
    const members = !excludesMembers(queryValue(request, 'excludedAttributes'))
    const list = await listScimGroups(deps, request.tenant, listQuery(request), { members })
    return send(reply, 200, list)
  })

  fastify.post('/:tenantSlug/Groups', { config, schema }, async (request, reply) => {
    const view = await provisionGroup(deps, request.tenant, request.body, caller(request))
    return sendGroup(request, reply, 201, view)
  })

  fastify.get('/:tenantSlug/Groups/:id', { config, schema }, async (request: IdRequest, reply) =>
    sendGroup(request, reply, 200, await getScimGroup(deps, request.tenant, request.params.id)),
  )

  // PUT replaces and PATCH edits (RFC 7644 §3.5.1, §3.5.2): the same call, another rule.
  const changeGroup =
    (write: typeof replaceGroup) => async (request: IdRequest, reply: FastifyReply) => {
      const { tenant, params, body } = request
      const view = await write(deps, tenant, params.id, body, caller(request), ifMatch(request))
      return sendGroup(request, reply, 200, view)
    }
  fastify.put('/:tenantSlug/Groups/:id', { config, schema }, changeGroup(replaceGroup))
  fastify.patch('/:tenantSlug/Groups/:id', { config, schema }, changeGroup(patchScimGroup))

  fastify.delete(
    '/:tenantSlug/Groups/:id',
    { config, schema },
    async (request: IdRequest, reply) => {
      const { tenant, params } = request
      await deprovisionGroup(deps, tenant, params.id, caller(request), ifMatch(request))
      return reply.status(204).send()
    },
  )
}
