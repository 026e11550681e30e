// GroupCommit's flushed() (lib/group-commit.ts): it waits for what was added before it was
// asked, never for what keeps arriving after (a busy instance's hook calls log: the calls
// list awaits it), and everything added before it is written by then.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { GroupCommit } from './group-commit.ts'

test('flushed() ends while items keep arriving, with every item added before it written', async () => {
  const written: number[] = []
  const log = new GroupCommit<number>(
    async (batch) => {
      await new Promise((resolve) => setTimeout(resolve, 10))
      written.push(...batch)
    },
    (error) => assert.fail(String(error)),
    { delayMs: 1000 },
  )
  let next = 0
  let adding = true
  // A producer faster than one write: until flushed() ends, or five seconds at most.
  const producer = (async () => {
    const stopAt = Date.now() + 5000
    while (adding && Date.now() < stopAt) {
      log.add(next++)
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  await new Promise((resolve) => setTimeout(resolve, 50))
  const before = next
  let done = false
  await Promise.race([
    log.flushed().then(() => {
      done = true
    }),
    producer,
  ])
  adding = false
  await producer
  assert.ok(done, 'flushed() ended while the producer still ran')
  for (let i = 0; i < before; i++) assert.ok(written.includes(i), `item ${i} written`)
  await log.flushed()
  assert.equal(new Set(written).size, next, 'and at the end, every item once')
})
