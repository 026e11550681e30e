// SCIM's discovery documents (RFC 7644 §4, RFC 7643 §5-§7): what this service supports
// (CONTRACT §14: patch and filter with maxResults 200 and ETags; no sort, bulk or
// changePassword), its resource types (User, Group) and the schemas it keeps: the attributes
// resource.ts maps and paths.ts lets PATCH reach, so a client reading them knows which of
// its attribute mappings to keep.

import { GROUP_SCHEMA } from './group-resource.ts'
import { LIST_SCHEMA, USER_SCHEMA } from './resource.ts'
import { MAX_RESULTS } from './service.ts'

const CONFIG_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'
const RESOURCE_TYPE_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType'
const SCHEMA_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Schema'

export function serviceProviderConfig(base: string) {
  return {
    schemas: [CONFIG_SCHEMA],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_RESULTS },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'Bearer API key',
        description: 'An API key of the tenant (ak_live_… or ak_test_…) as the bearer token.',
        primary: true,
      },
    ],
    meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
  }
}

export function groupResourceType(base: string) {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: 'Group',
    name: 'Group',
    endpoint: '/Groups',
    description: 'A group of the tenant’s users; its members hold the roles given to it.',
    schema: GROUP_SCHEMA,
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` },
  }
}

export function userResourceType(base: string) {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: 'User',
    name: 'User',
    endpoint: '/Users',
    description: 'A user of the tenant; the id is the user id.',
    schema: USER_SCHEMA,
    meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` },
  }
}

interface Attribute {
  name: string
  type: 'string' | 'boolean' | 'complex' | 'reference'
  multiValued: boolean
  description: string
  required: boolean
  caseExact: boolean
  mutability: 'readWrite' | 'writeOnly' | 'immutable' | 'readOnly'
  returned: 'default' | 'never'
  uniqueness: 'none' | 'server'
  subAttributes?: Attribute[]
}

const attr = (name: string, description: string, more: Partial<Attribute> = {}): Attribute => ({
  name,
  type: 'string',
  multiValued: false,
  description,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...more,
})

const ATTRIBUTES: Attribute[] = [
  attr('userName', "The user's email address, unique in the tenant.", {
    required: true,
    uniqueness: 'server',
  }),
  attr('name', "The user's name.", {
    type: 'complex',
    subAttributes: [
      attr('givenName', 'The given (first) name, 1 to 200 characters.'),
      attr('familyName', 'The family (last) name, 1 to 200 characters.'),
      attr('formatted', 'Accepted and not kept: the service keeps the parts.'),
    ],
  }),
  attr('displayName', 'The name to show, 1 to 200 characters.'),
  attr('externalId', "The client's own id for the user, 1 to 256 characters.", {
    caseExact: true,
  }),
  attr(
    'preferredLanguage',
    'The user’s language (RFC 7643 §4.1.1, an Accept-Language value): kept as the best-matching supported locale (en-US → en); one the service does not speak is 400 invalidValue.',
  ),
  attr('emails', 'The one address, the same as userName; changing it changes userName.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The email address.'),
      attr('type', 'Answered as "work".'),
      attr('primary', 'Answered as true.', { type: 'boolean' }),
    ],
  }),
  attr('active', 'false suspends the user and ends the sessions.', { type: 'boolean' }),
  attr('password', 'Sets the password (at least 12 characters, not a common one).', {
    mutability: 'writeOnly',
    returned: 'never',
    caseExact: true,
  }),
]

export function userSchema(base: string) {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: USER_SCHEMA,
    name: 'User',
    description: 'A user of the tenant.',
    attributes: ATTRIBUTES,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${USER_SCHEMA}` },
  }
}

const GROUP_ATTRIBUTES: Attribute[] = [
  attr(
    'displayName',
    'The group’s name, unique in the tenant (ignoring case), 1 to 256 characters.',
    {
      required: true,
      uniqueness: 'server',
    },
  ),
  attr('externalId', "The client's own id for the group, 1 to 256 characters.", {
    caseExact: true,
  }),
  attr('members', 'The users in the group; each must be a live user of the tenant.', {
    type: 'complex',
    multiValued: true,
    subAttributes: [
      attr('value', 'The user’s id.', { mutability: 'immutable', caseExact: true }),
      attr('display', 'The user’s displayName, else its email (not kept from a request).', {
        mutability: 'readOnly',
      }),
      attr('$ref', 'The user’s SCIM location.', { type: 'reference', mutability: 'readOnly' }),
      attr('type', 'Answered as "User".', { mutability: 'readOnly' }),
    ],
  }),
]

export function groupSchema(base: string) {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: GROUP_SCHEMA,
    name: 'Group',
    description: 'A group of the tenant’s users.',
    attributes: GROUP_ATTRIBUTES,
    meta: { resourceType: 'Schema', location: `${base}/Schemas/${GROUP_SCHEMA}` },
  }
}

/** A ListResponse of every item at once (the discovery lists are not paged). */
export function listOf<T>(items: T[]) {
  return {
    schemas: [LIST_SCHEMA],
    totalResults: items.length,
    startIndex: 1,
    itemsPerPage: items.length,
    Resources: items,
  }
}
