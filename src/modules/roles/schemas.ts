// Shapes of the permission catalogue and the roles routes (CONTRACT §17).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ref, TenantSlugParams, Uuid } from '../../schemas.ts'
import { PERMISSION_NAMES, type Permission } from './permissions.ts'

/** A tenant permission's name, one of the catalogue's. */
export const PermissionName = Type.Unsafe<Permission>(
  Type.Union(
    PERMISSION_NAMES.map((name) => Type.Literal(name)),
    { description: 'A tenant permission of the catalogue (GET permissions).' },
  ),
)

const PermissionComponent = Type.Object(
  { name: PermissionName, description: Type.String() },
  { $id: 'Permission', description: 'A tenant permission and what it guards.' },
)

const PermissionListComponent = Type.Object(
  { items: Type.Array(ref(PermissionComponent)) },
  { $id: 'PermissionList', description: 'Every tenant permission, fixed by the service.' },
)
export const PermissionList = ref(PermissionListComponent)

const RoleName = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'Unique in the tenant ignoring case; never `Admin` or `Member`.',
})
const RoleKind = Type.Union([Type.Literal('tenant'), Type.Literal('organization')])
const ResourceScopes = Type.Array(
  Type.Object(
    {
      resource: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'An API resource identifier (CONTRACT §11).',
      }),
      scopes: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 100 }),
    },
    { additionalProperties: false },
  ),
  { maxItems: 100 },
)
/** Names as sent: checked against the catalogue by the service, so the 400 names the unknown one. */
const Permissions = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 100 })

const RoleComponent = Type.Object(
  {
    id: Type.String({ description: 'A uuid; a built-in role’s is its name.' }),
    name: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    kind: RoleKind,
    permissions: Type.Array(PermissionName),
    resourceScopes: Type.Array(
      Type.Object({ resource: Type.String(), scopes: Type.Array(Type.String()) }),
    ),
    builtIn: Type.Boolean(),
    createdAt: Type.Union([DateTime, Type.Null()], { description: 'null for a built-in role.' }),
    updatedAt: Type.Union([DateTime, Type.Null()], { description: 'null for a built-in role.' }),
  },
  { $id: 'Role', description: 'A role of the tenant: a built-in one or a custom one.' },
)
export const RoleRecord = ref(RoleComponent)
export type RoleRecord = Static<typeof RoleComponent>

const RoleEnvelopeComponent = Type.Object(
  { role: RoleRecord },
  { $id: 'RoleEnvelope', description: 'One role.' },
)
export const RoleEnvelope = ref(RoleEnvelopeComponent)

const RolePageComponent = Page(
  'RolePage',
  RoleRecord,
  'A page of the tenant’s roles: the first page holds the built-ins, then up to `limit` custom roles oldest first; later pages custom roles only.',
)
export const RolePage = ref(RolePageComponent)

export const CreateRoleBody = Type.Object(
  {
    name: RoleName,
    description: Type.Optional(Type.String({ maxLength: 500 })),
    kind: Type.Optional(RoleKind),
    permissions: Type.Optional(Permissions),
    resourceScopes: Type.Optional(ResourceScopes),
  },
  {
    additionalProperties: false,
    examples: [{ name: 'Support', permissions: ['users:read', 'users:write'] }],
  },
)
export type CreateRoleBody = Static<typeof CreateRoleBody>

export const PatchRoleBody = Type.Object(
  {
    name: Type.Optional(RoleName),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
    permissions: Type.Optional(Permissions),
    resourceScopes: Type.Optional(ResourceScopes),
  },
  { additionalProperties: false, examples: [{ permissions: ['users:read'] }] },
)
export type PatchRoleBody = Static<typeof PatchRoleBody>

export const RoleParams = Type.Object({
  ...TenantSlugParams.properties,
  id: Type.String({ minLength: 1, maxLength: 200 }),
})

export const UserRolesParams = Type.Object({ ...TenantSlugParams.properties, userId: Uuid })
export const UserRolesBody = Type.Object(
  {
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 50,
      description: 'The names of the custom roles the user holds directly (at most 50).',
    }),
  },
  { additionalProperties: false, examples: [{ roles: ['Support'] }] },
)
export type UserRolesBody = Static<typeof UserRolesBody>

export const roleComponents = [
  PermissionComponent,
  PermissionListComponent,
  RoleComponent,
  RoleEnvelopeComponent,
  RolePageComponent,
]
