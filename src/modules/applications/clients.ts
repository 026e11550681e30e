// An application as the OpenID provider finds its client (issue 36, Structure; CONTRACT
// §11): the row's type and the lookup by client id at one tenant (oidc/clients.ts).
// applications/queries.ts's own, re-exported, on the handle the caller passes. No file
// outside applications/ imports queries.ts (test/layout.test.ts checks).
export { type Application, findApplicationByClientId } from './queries.ts'
