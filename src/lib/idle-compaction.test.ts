// Idle compaction (issue 10): a memory-reducing collection once the service is quiet, never
// while requests arrive, and not more often than the minimum gap.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type GcFunction, IdleCompactor } from './idle-compaction.ts'

function compactor(minGapMs = 30_000) {
  const calls: Parameters<GcFunction>[0][] = []
  const c = new IdleCompactor((options) => calls.push(options), minGapMs)
  return { c, calls }
}

test('the first quiet tick after the start compacts, with the memory-reducing collection', () => {
  const { c, calls } = compactor()
  assert.equal(c.tick(1000), true)
  assert.deepEqual(calls, [{ type: 'major', execution: 'sync', flavor: 'last-resort' }])
  assert.equal(c.tick(2000), false, 'nothing happened since: no second compaction')
  assert.equal(calls.length, 1)
})

test('never while requests keep arriving; once after they stop', () => {
  const { c, calls } = compactor(0)
  for (let t = 1; t <= 5; t++) {
    c.noteRequest()
    assert.equal(c.tick(t * 1000), false)
  }
  assert.equal(calls.length, 0)
  assert.equal(c.tick(6000), true)
  assert.equal(c.tick(7000), false)
  assert.equal(calls.length, 1)
})

test('work after a compaction earns another, but not sooner than the minimum gap', () => {
  const { c, calls } = compactor(30_000)
  c.tick(1000)
  c.noteRequest()
  c.tick(2000)
  assert.equal(c.tick(3000), false, 'quiet, but within 30 s of the last')
  assert.equal(c.tick(31_000), true)
  assert.equal(calls.length, 2)
})
