// What other modules read and change of an address's invitations (issue 36, Structure):
// an erasure (privacy, CONTRACT §9) locks the address's invitations and revokes the
// pending ones, and the cross-tenant lookup of a token (db/cross-tenant.ts) answers the
// invitation row's type. They are invites/queries.ts's own, re-exported: the same
// statements, on the transaction the caller passes. No file outside invites/ imports
// queries.ts (test/layout.test.ts checks).
export { type Invite, lockAddress, revokePendingFor } from './queries.ts'
