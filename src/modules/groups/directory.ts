// What other modules read of the tenant's groups (issue 36, Structure): the SCIM module's
// lookups by filter. They are groups/queries.ts's own, re-exported: the same statements, on
// the handle the caller passes. No file outside groups/ imports queries.ts
// (test/layout.test.ts checks).
export { findGroups, type GroupClause } from './queries.ts'
