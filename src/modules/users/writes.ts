// The changes other modules make to a user row (issue 36, Structure): a sign-in's stamps,
// a proven address, the TOTP state of an enrolment or a spent step, an import's rows and
// an erasure's deletes. They are users/queries.ts's own functions, re-exported: the same
// statements, on the handle (a transaction too) the caller passes, so queries.ts stays the
// only writer of the users table and no file outside users/ imports it (test/layout.test.ts).
export {
  activateTotp,
  claimTotpStep,
  deleteEmailConflictOf,
  hardDeleteUser,
  insertImportedUsers,
  markAddressProven,
  markEmailVerified,
  markSignedInByCode,
  stampLastLogin,
  storePendingTotp,
  updateImportedUser,
  updateUser,
} from './queries.ts'
