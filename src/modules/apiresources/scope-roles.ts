// What the roles module reads and writes of the API resources (issue 36, Structure; CONTRACT
// §17): every resource of a tenant, page by page (the built-in roles' resource scopes,
// roles/service.ts), and a custom role renamed or deleted in the scopes' `roles` that name
// it, in the role change's own transaction. apiresources/queries.ts's own statements,
// re-exported, on the handle the caller passes. No file outside apiresources/ imports
// queries.ts (test/layout.test.ts checks).
export { type ApiResource, listApiResources, renameScopeRole } from './queries.ts'
