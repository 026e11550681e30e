// An application as the OpenID provider finds its client (issue 36, Structure; CONTRACT
// §11): the row's type and the lookup by client id at one tenant (oidc/clients.ts); and a
// saml application as the SAML IdP finds it (CONTRACT §22, samlidp/): by its SP's entity id
// or by id. applications/queries.ts's own, re-exported, on the handle the caller passes. No
// file outside applications/ imports queries.ts (test/layout.test.ts checks).
export {
  type Application,
  findApplication,
  findApplicationByClientId,
  findSamlApplicationByEntityId,
} from './queries.ts'
