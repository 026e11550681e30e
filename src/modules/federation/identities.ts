// A user's identities at every outside source (CONTRACT §19, the one identities table): the
// SPEC's identity provider (kind 'idp', linked by federation/link.ts), the SSO connections ('sso',
// sso-signin.ts) and the account's list and removal of them. They are queries.ts's own
// functions, re-exported as users/reads.ts does: the same statements, on the handle (a
// transaction too) the caller passes, so queries.ts stays the table's only writer and no
// file outside federation/ imports it (test/layout.test.ts).
export {
  deleteIdentitiesOf,
  deleteUserIdentity,
  findIdentity,
  type Identity,
  type IdentityKey,
  type IdentityKind,
  insertIdentity,
  listUserIdentities,
  updateIdentityEmail,
} from './queries.ts'
