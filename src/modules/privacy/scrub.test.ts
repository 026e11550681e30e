// The erasure's rule for audit events (scrub.ts): the address leaves wherever it stands as
// a whole address, in any case; addresses that merely contain it stay.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { AuditEvent } from '../audit/trail.ts'
import { addressPattern, ERASED, scrubEvent } from './scrub.ts'

const ADDRESS = 'ada+x@ex-ample.com'

const event = (fields: Partial<AuditEvent>): AuditEvent => ({
  tenantId: 't',
  id: 'e',
  action: 'UserLoginFailed',
  actorType: 'anonymous',
  actorId: null,
  userId: null,
  email: null,
  ip: '192.0.2.1',
  userAgent: 'curl',
  metadata: {},
  createdAt: new Date(0),
  ...fields,
})

test('an address is matched whole, in any case, and not inside a longer one', () => {
  const p = addressPattern([ADDRESS])
  const matches = (text: string) => {
    p.lastIndex = 0
    return p.test(text)
  }
  assert.ok(matches(ADDRESS))
  assert.ok(matches('ADA+X@EX-AMPLE.COM'))
  assert.ok(matches(`mail to <${ADDRESS}>.`))
  assert.ok(!matches(`bob.${ADDRESS}`))
  assert.ok(!matches(`${ADDRESS}.uk`))
  assert.ok(!matches(`${ADDRESS}-x`))
  assert.ok(!matches('adaxx@ex-ample.com'), 'the + and . are literal')
})

test('a failed login naming only the address loses it from the email column and metadata', () => {
  const scrubbed = scrubEvent(
    event({ email: ADDRESS, metadata: { email: ADDRESS, reason: 'invalid_credentials' } }),
    'u',
    [ADDRESS],
  )
  assert.deepEqual(scrubbed, { id: 'e', email: null, metadata: { reason: 'invalid_credentials' } })
})

test('inside longer texts, arrays and keys the address is replaced; other values stay', () => {
  const scrubbed = scrubEvent(
    event({
      metadata: {
        note: `sent to ${ADDRESS} today`,
        list: [ADDRESS, 'b@c.d'],
        [ADDRESS]: 1,
        other: `bob.${ADDRESS}`,
        nested: { to: ADDRESS.toUpperCase(), n: 2 },
      },
    }),
    'u',
    [ADDRESS],
  )
  assert.deepEqual(scrubbed?.metadata, {
    note: `sent to ${ERASED} today`,
    list: ['b@c.d'],
    [ERASED]: 1,
    other: `bob.${ADDRESS}`,
    nested: { n: 2 },
  })
})

test("events about or by the user are scrubbed; another user's events are left alone", () => {
  const about = scrubEvent(event({ userId: 'u', email: ADDRESS }), 'u', [ADDRESS])
  assert.deepEqual(about, { id: 'e', email: null, metadata: {} })
  const byUser = scrubEvent(event({ actorId: 'u', email: 'someone@else.example' }), 'u', [ADDRESS])
  assert.equal(byUser?.email, 'someone@else.example')
  const unrelated = scrubEvent(event({ userId: 'v', email: `bob.${ADDRESS}` }), 'u', [ADDRESS])
  assert.equal(unrelated, undefined)
  const kept = scrubEvent(
    event({ userId: 'u', action: 'GdprErasureRequested' }),
    'u',
    [ADDRESS],
    () => true,
  )
  assert.equal(kept, undefined)
})
