// What other modules read of a user (issue 36, Structure): the row's type, the lookups by
// id and address, and the row locks a caller's transaction takes before it changes a user.
// They are users/queries.ts's own functions, re-exported: the same statements, on the
// handle (a transaction too) the caller passes. No file outside users/ imports queries.ts
// (test/layout.test.ts checks); the writes other modules make are in writes.ts.
export {
  findLiveByEmails,
  findUserAccess,
  findUserByEmail,
  findUserById,
  findUserRecord,
  lockActiveAdmins,
  lockLiveUser,
  lockPendingUser,
  lockUserInAnyState,
  lockUserRow,
  type NewUser,
  type User,
  type UserAccess,
  userFromRow,
} from './queries.ts'
