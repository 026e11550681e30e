// What the step-up module reads and changes of a session (issue 36, Structure; CONTRACT
// §16): when a live session last proved a factor, and the stamp of a reauthentication; and
// that a session has proved a second factor (CONTRACT §18 mfaRequired), once it did.
// They are sessions/queries.ts's own, re-exported: the same statements, on the handle (a
// transaction too) the caller passes. No file outside sessions/ imports queries.ts
// (test/layout.test.ts checks).
export { lastProofOf, markSecondFactor, stampReauthentication } from './queries.ts'
