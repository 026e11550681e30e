// What other modules read and write of a user's custom roles (issue 36, Structure): the
// role row's type, roles by name, a user's role names, granting roles to an imported user,
// the lock that serialises a tenant's role changes (an API resource naming roles in its
// scopes' `roles` takes it, apiresources/service.ts), and the SQL fragments that read a user's role names and permissions inside the users
// row's own statement (users/queries.ts, users/record.ts, introspection: no second query);
// for groups and the SSO roleMapping (CONTRACT §17), roles by id, the roles of many users at
// once, and the SSO mapping's own rows of a user.
// They are roles/queries.ts's own, re-exported: the same statements, on the handle (a
// transaction too) the caller passes. No file outside roles/ imports queries.ts
// (test/layout.test.ts checks).
export {
  addUserRoles,
  findRolesByIds,
  findRolesByName,
  heldRoleNamesJson,
  lockTenantRoles,
  ROLE_NAMES_SQL,
  ROLE_PERMISSIONS_SQL,
  type Role,
  replaceSsoRoles,
  roleNamesFromJson,
  roleNamesOfUsers,
  userRoleNames,
} from './queries.ts'
