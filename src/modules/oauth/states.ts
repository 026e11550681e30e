// The single-use OAuth states other modules keep (issue 36, Structure): the federation
// module's sign-ins (federation/oidc-signin.ts) and pending second factors
// (federation/pending-mfa.ts) store, read, spend and sweep their states in oauth_states.
// They are oauth/queries.ts's own, re-exported: the same statements (a state is spent in
// one UPDATE), on the handle (a transaction too) the caller passes. No file outside oauth/
// imports queries.ts (test/layout.test.ts checks).
export { deleteStaleStates, findLiveState, insertState, spendState } from './queries.ts'
