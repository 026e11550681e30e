// Typed events (issue 36): the compiler holds the map (npm run typecheck). Each entry below
// marked as an expected error must stay one, so the map cannot silently stop checking; an
// action added to actions.ts without its metadata type fails to compile events.ts itself.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AuditEntry } from './events.ts'

test('an audit entry carries only the metadata its action declares', () => {
  const entries: AuditEntry[] = [
    { action: 'PasskeyRemoved', userId: 'u', metadata: { passkeyId: 'p' } },
    // @ts-expect-error a misspelled field is refused
    { action: 'PasskeyRemoved', metadata: { passkeyID: 'p' } },
    // @ts-expect-error a field the action requires is required
    { action: 'MfaRecoveryCodeUsed', metadata: {} },
    // @ts-expect-error a field of another action is refused
    { action: 'WebhookDeleted', metadata: { webhookId: 'w', passkeyId: 'p' } },
  ]
  assert.equal(entries.length, 4)
})
