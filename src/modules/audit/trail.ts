// What the privacy module reads and changes of the audit log (issue 36, Structure; CONTRACT
// §9): a user's events for the personal-data export, and an erasure's events about the
// user with the scrub that rewrites them. They are audit/queries.ts's own, re-exported:
// the same statements, on the handle (a transaction too) the caller passes. No file outside
// audit/ imports queries.ts (test/layout.test.ts checks).
export {
  type AuditEvent,
  eventsAbout,
  eventsConcerning,
  type ScrubbedEvent,
  scrubEvents,
} from './queries.ts'
