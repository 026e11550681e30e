// The one read of a session's liveness with its user (issue 36, Structure): the OpenID
// provider (oidc/provider.ts) checks a session with the statement introspection uses.
// introspection/queries.ts's own, re-exported, on the handle the caller passes. No file
// outside introspection/ imports queries.ts (test/layout.test.ts checks).
export { findLiveSession } from './queries.ts'
