// What other modules read of a tenant (issue 36, Structure): the row's type, the live
// tenant by id, and its identity-provider credentials (CONTRACT §7), which the oauth module
// stores and reads. They are tenants/queries.ts's own functions, re-exported: the same
// statements, on the handle (a transaction too) the caller passes. No file outside
// tenants/ imports queries.ts (test/layout.test.ts checks).
export {
  findCredentials,
  findTenantById,
  removeCredentials,
  storeCredentials,
  type Tenant,
} from './queries.ts'
