// afterCommit on the service's real database (PGlite, or PostgreSQL with DATABASE_URL): work
// waits for the commit of the transaction it was queued in, never runs for one rolled back,
// and a savepoint's work joins its outer transaction's. The audit log's listeners (the
// metrics) hear of a write only once it committed.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  createTenant,
  startServer,
  type TenantFixture,
  type TestServer,
} from '../../test/helpers.ts'
import { SYSTEM_ACTOR } from '../modules/audit/recorder.ts'
import { afterCommit } from './after-commit.ts'
import { sql } from './orm.ts'

let server: TestServer
let t: TenantFixture

before(async () => {
  server = await startServer()
  t = await createTenant(server)
})

after(() => server?.close())

test('afterCommit: the work runs once the transaction committed, not before', async () => {
  const ran: string[] = []
  await server.deps.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT 1`)
    afterCommit(tx, () => ran.push('first'))
    afterCommit(tx, () => ran.push('second'))
    assert.deepEqual(ran, [], 'nothing runs inside the transaction')
  })
  assert.deepEqual(ran, ['first', 'second'])
})

test('afterCommit: a transaction rolled back runs none of its work', async () => {
  const ran: string[] = []
  await assert.rejects(
    server.deps.db.transaction(async (tx) => {
      afterCommit(tx, () => ran.push('never'))
      throw new Error('rolled back')
    }),
    /rolled back/,
  )
  assert.deepEqual(ran, [])
})

test('afterCommit: a savepoint’s work waits for the outer commit, and goes with a savepoint rolled back', async () => {
  const ran: string[] = []
  await server.deps.db.transaction(async (tx) => {
    await tx.transaction(async (inner) => {
      afterCommit(inner, () => ran.push('kept savepoint'))
    })
    await assert.rejects(
      tx.transaction(async (inner) => {
        afterCommit(inner, () => ran.push('rolled-back savepoint'))
        throw new Error('savepoint rolled back')
      }),
    )
    afterCommit(tx, () => ran.push('outer'))
    assert.deepEqual(ran, [], 'a savepoint’s release is no commit')
  })
  assert.deepEqual(ran, ['kept savepoint', 'outer'])
})

test('afterCommit: outside a transaction the statement has committed, so the work runs at once', () => {
  const ran: string[] = []
  afterCommit(server.deps.db, () => ran.push('now'))
  assert.deepEqual(ran, ['now'])
})

test('afterCommit: a failing piece of work neither fails the commit nor stops the others', async () => {
  const ran: string[] = []
  await server.deps.db.transaction(async (tx) => {
    afterCommit(tx, () => {
      throw new Error('mail server away')
    })
    afterCommit(tx, () => ran.push('still'))
  })
  assert.deepEqual(ran, ['still'])
})

test('audit listeners hear of a write once it committed, and never of one rolled back', async () => {
  const heard: string[] = []
  server.deps.audit.subscribe((entries) => {
    for (const e of entries) {
      const probe = (e.metadata as Record<string, unknown> | undefined)?.probe
      if (probe) heard.push(String(probe))
    }
  })
  const entry = (probe: string) => ({ action: 'UserLoginFailed' as const, metadata: { probe } })
  await assert.rejects(
    server.deps.db.transaction(async (tx) => {
      await server.deps.audit.record(tx, t.tenantId, SYSTEM_ACTOR, [entry('rolled back')])
      throw new Error('rolled back')
    }),
  )
  await server.deps.db.transaction(async (tx) => {
    await server.deps.audit.record(tx, t.tenantId, SYSTEM_ACTOR, [entry('committed')])
    assert.deepEqual(heard, [], 'not before the commit')
  })
  await server.deps.audit.record(server.deps.db, t.tenantId, SYSTEM_ACTOR, [entry('autocommit')])
  assert.deepEqual(heard, ['committed', 'autocommit'])
})
