// What other modules end of the provider's stored models (issue 36, Structure; CONTRACT
// §11): one grant with everything issued under it (connected apps), every model of a
// deleted application (applications) and every model of an erased user (privacy, CONTRACT
// §9). They are oidc/queries.ts's own, re-exported: the same statements, on the handle (a
// transaction too) the caller passes. No file outside oidc/ imports queries.ts
// (test/layout.test.ts checks).
export { deleteAccountModels, deleteClientModels, destroyModel, revokeGrant } from './queries.ts'
