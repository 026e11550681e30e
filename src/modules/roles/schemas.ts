// Shapes of the permission catalogue and the roles routes (CONTRACT §17).
import { Type } from 'typebox'
import { ref } from '../../schemas.ts'
import { PERMISSION_NAMES } from './permissions.ts'

/** A tenant permission's name, one of the catalogue's. */
export const PermissionName = Type.Union(
  PERMISSION_NAMES.map((name) => Type.Literal(name)),
  { description: 'A tenant permission of the catalogue (GET permissions).' },
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

export const roleComponents = [PermissionComponent, PermissionListComponent]
