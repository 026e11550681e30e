// Shapes of the groups admin routes (CONTRACT §17): the group record, its page, and the
// body of PUT groups/{id}/roles. Groups are made and changed by SCIM (scim/groups.ts).
import { type Static, Type } from 'typebox'
import { DateTime, Page, ref, TenantSlugParams, Uuid } from '../../schemas.ts'

const GroupComponent = Type.Object(
  {
    id: Uuid,
    displayName: Type.String({ description: 'Unique in the tenant, ignoring case.' }),
    externalId: Type.Union([Type.String(), Type.Null()], {
      description: 'The directory’s own id for the group.',
    }),
    roles: Type.Array(Type.String(), {
      description: 'The custom roles every member holds while a member, sorted.',
    }),
    memberCount: Type.Integer({ minimum: 0, description: 'Its live members.' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    $id: 'Group',
    description: 'A group of the tenant’s users, provisioned by SCIM; its members hold its roles.',
  },
)
export const GroupRecord = ref(GroupComponent)

const GroupEnvelopeComponent = Type.Object(
  { group: GroupRecord },
  { $id: 'GroupEnvelope', description: 'One group.' },
)
export const GroupEnvelope = ref(GroupEnvelopeComponent)

const GroupPageComponent = Page('GroupPage', GroupRecord, 'A page of groups, oldest first.')
export const GroupPage = ref(GroupPageComponent)

export const GroupParams = Type.Object({ ...TenantSlugParams.properties, id: Uuid })

export const GroupRolesBody = Type.Object(
  {
    roles: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 50,
      description: 'The names of the custom roles every member holds (at most 50).',
    }),
  },
  { additionalProperties: false, examples: [{ roles: ['Support'] }] },
)
export type GroupRolesBody = Static<typeof GroupRolesBody>

export const groupComponents = [GroupComponent, GroupEnvelopeComponent, GroupPageComponent]
