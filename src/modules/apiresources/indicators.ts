// The API resource a resource indicator names (RFC 8707), as other modules read it (issue
// 36, Structure): the OpenID provider's resource check (oidc/resources.ts) and a role's
// resource scopes (roles/service.ts, roles/resource-scopes.ts). apiresources/queries.ts's
// own statement, re-exported, on the handle (a transaction too) the caller passes. No file
// outside apiresources/ imports queries.ts (test/layout.test.ts checks).
export { findApiResourceByIdentifier } from './queries.ts'
