// The tenant cache's memory follows the tenants served in the last two seconds, never every
// tenant ever served (the Provider pool's bench touches 10,000 in turn).
import assert from 'node:assert/strict'
import test from 'node:test'
import { FreshMap } from './cache.ts'

test('an entry is answered while fresh, and not once its two seconds have passed', () => {
  const map = new FreshMap<string>()
  map.store('acme', 'tenant', 1_000)
  assert.equal(map.fresh('acme', 2_999), 'tenant')
  assert.equal(map.fresh('acme', 3_000), undefined)
  assert.equal(map.fresh('other', 1_000), undefined)
})

test('storing drops the entries past their time, so many tenants in turn keep few entries', () => {
  const map = new FreshMap<number>()
  for (let i = 0; i < 5_000; i++) map.store(`t-${i}`, i, i * 10)
  // 10 ms apart: only the last 2 s (200 entries) are kept.
  assert.equal(map.size, 200)
  assert.equal(map.fresh('t-4999', 49_990), 4999)
  assert.equal(map.fresh('t-4800', 49_990), 4800)
  assert.equal(map.has('t-4799'), false)
})

test('at most 1,000 entries even when all are fresh, the oldest dropped first', () => {
  const map = new FreshMap<number>()
  for (let i = 0; i < 1_500; i++) map.store(`t-${i}`, i, 0)
  assert.equal(map.size, 1_000)
  assert.equal(map.has('t-499'), false)
  assert.equal(map.fresh('t-500', 0), 500)
})

test('storing a key again moves it to the newest end, so it outlives entries stored before', () => {
  const map = new FreshMap<number>()
  map.store('a', 1, 0)
  map.store('b', 2, 1_000)
  map.store('a', 3, 1_500)
  map.store('c', 4, 2_500)
  assert.deepEqual([...map.keys()], ['b', 'a', 'c'])
  assert.equal(map.fresh('a', 2_500), 3)
})
