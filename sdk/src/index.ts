// @tenant-auth/sdk: typed clients of the tenant authentication service, sessions with
// single-flight refresh shared across tabs, and an access-token verifier for back ends.
export {
  authenticate,
  bearerToken,
  expressAuth,
  fastifyAuth,
  honoAuth,
} from './adapters.ts'
export {
  ADMIN_OPERATIONS,
  type AdminClient,
  type AdminClientOptions,
  createAdminClient,
} from './admin.ts'
export { type Client, type ClientOptions, createClient, type FetchLike } from './client.ts'
export { AuthServiceError, type AuthServiceErrorInit } from './errors.ts'
export type { components, operations, paths } from './generated/openapi.ts'
export {
  OPERATIONS,
  type OperationArgs,
  type OperationData,
  type OperationId,
  type OperationInput,
} from './operations.ts'
export {
  createSessionClient,
  type Session,
  type SessionClient,
  type SessionClientOptions,
  type TokenEnvelope,
  type VerificationRequired,
} from './session.ts'
export { localStorageStore, memoryStore, type SessionStore, type StorageLike } from './stores.ts'
export { type AccessTokenClaims, type VerifyOptions, verifyAccessToken } from './verify.ts'
