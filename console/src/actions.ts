// The audit actions the filter offers: the service's list (src/modules/audit/actions.ts),
// which the console imports at build time so the two cannot drift.
export { AUDIT_ACTIONS } from '../../src/modules/audit/actions.ts'
