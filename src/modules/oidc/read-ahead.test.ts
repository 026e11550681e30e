// The adapter's reads that save round trips (queries.ts, request-memo.ts) answer as the
// plain reads would: finds of one id asked together get each their own model's row; within
// one request to a Provider the grant and session read with a code answer the next find of
// each once only, and any write to oidc_models empties the memo; outside a request nothing
// is kept. Run on the real database, through the store's own functions.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { createTenant, startTestServer, type TestServer } from '../../../test/helpers.ts'
import { sql } from '../../db/orm.ts'
import { findModel, findModelByUid, upsertModel } from './queries.ts'
import { requestMemo } from './request-memo.ts'

let server: TestServer
let tenantId: string

before(async (ctx) => {
  server = await startTestServer(ctx)
  tenantId = (await createTenant(server)).tenantId
})

const inRequest = <T>(steps: () => Promise<T>): Promise<T> => {
  let out: T | undefined
  return requestMemo(undefined, async () => {
    out = await steps()
  }).then(() => out as T)
}

/** Changes a row behind the store's back, as another instance's request would. */
async function setPayload(model: string, id: string, payload: Record<string, unknown>) {
  await server.deps.db.execute(
    sql`UPDATE oidc_models SET payload = ${JSON.stringify(payload)}::jsonb
        WHERE tenant_id = ${tenantId} AND model = ${model} AND id = ${id}`,
  )
}

/** A grant, a provider session and a code bound to both; their ids. */
async function codeWithGrant() {
  const grant = crypto.randomUUID()
  const uid = crypto.randomUUID()
  const code = crypto.randomUUID()
  const { db } = server.deps
  await upsertModel(db, tenantId, 'Grant', grant, { jti: grant, v: 1 }, 600)
  await upsertModel(db, tenantId, 'Session', crypto.randomUUID(), { uid, s: 1 }, 600)
  await upsertModel(
    db,
    tenantId,
    'AuthorizationCode',
    code,
    { grantId: grant, sessionUid: uid },
    60,
  )
  return { grant, uid, code }
}

test('finds of one id asked together are each answered with their own model’s row, or none', async () => {
  const { db } = server.deps
  const id = crypto.randomUUID()
  await upsertModel(db, tenantId, 'AccessToken', id, { kind: 'AccessToken' }, 600)
  await upsertModel(db, tenantId, 'RefreshToken', id, { kind: 'RefreshToken' }, 600)
  for (const run of [(f: () => Promise<unknown>) => f(), inRequest]) {
    const found = await run(() =>
      Promise.all([
        findModel(db, tenantId, 'AccessToken', id),
        findModel(db, tenantId, 'ClientCredentials', id),
        findModel(db, tenantId, 'RefreshToken', id),
      ]),
    )
    assert.deepEqual(found, [{ kind: 'AccessToken' }, undefined, { kind: 'RefreshToken' }])
  }
  // Another tenant's finds of the same id find nothing.
  const other = (await createTenant(server)).tenantId
  assert.equal(await findModel(db, other, 'AccessToken', id), undefined)
})

test('within a request, the grant and session read with a code answer the next find of each once; a write empties the memo', async () => {
  const { db } = server.deps
  const { grant, uid, code } = await codeWithGrant()
  await inRequest(async () => {
    assert.deepEqual(await findModel(db, tenantId, 'AuthorizationCode', code), {
      grantId: grant,
      sessionUid: uid,
    })
    await setPayload('Grant', grant, { jti: grant, v: 2 })
    // Read with the code, in its snapshot…
    assert.deepEqual(await findModel(db, tenantId, 'Grant', grant), { jti: grant, v: 1 })
    assert.deepEqual(await findModelByUid(db, tenantId, 'Session', uid), { uid, s: 1 })
    // …and once only: the next find reads the database.
    assert.deepEqual(await findModel(db, tenantId, 'Grant', grant), { jti: grant, v: 2 })

    await findModel(db, tenantId, 'AuthorizationCode', code)
    await setPayload('Grant', grant, { jti: grant, v: 3 })
    await upsertModel(db, tenantId, 'Interaction', crypto.randomUUID(), {}, 60)
    assert.deepEqual(await findModel(db, tenantId, 'Grant', grant), { jti: grant, v: 3 })
  })
  // A memo is its request's: another request reads the database.
  await inRequest(async () => {
    await setPayload('Grant', grant, { jti: grant, v: 4 })
    assert.deepEqual(await findModel(db, tenantId, 'Grant', grant), { jti: grant, v: 4 })
  })
})

test('a grant or session gone by the time the code is read is answered as gone; outside a request nothing is read ahead', async () => {
  const { db } = server.deps
  const { grant, uid, code } = await codeWithGrant()
  await server.deps.db.execute(
    sql`DELETE FROM oidc_models WHERE tenant_id = ${tenantId} AND model IN ('Grant', 'Session')
        AND (id = ${grant} OR uid = ${uid})`,
  )
  await inRequest(async () => {
    assert.ok(await findModel(db, tenantId, 'AuthorizationCode', code))
    assert.equal(await findModel(db, tenantId, 'Grant', grant), undefined)
    assert.equal(await findModelByUid(db, tenantId, 'Session', uid), undefined)
  })

  const again = await codeWithGrant()
  assert.ok(await findModel(db, tenantId, 'AuthorizationCode', again.code))
  await setPayload('Grant', again.grant, { jti: again.grant, v: 9 })
  assert.deepEqual(await findModel(db, tenantId, 'Grant', again.grant), { jti: again.grant, v: 9 })
})
