// Hooks (CONTRACT §21): the endpoints a tenant's admin registers to be called, and waited
// for, during a sign-up, a sign-in or the minting of an access token; one per event. Each
// change is audited in its transaction; the secret is shown once and stored sealed. The
// calls themselves are in call.ts.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import type { Actor } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { newSecret } from '../webhooks/secret.ts'
import { auditedUrl, checkUrl } from '../webhooks/service.ts'
import { logCallFailure, type WarnLog } from './cache.ts'
import { testCall } from './call.ts'
import * as store from './queries.ts'
import type {
  CreateHookBody,
  HookCall,
  HookEvent,
  HookOutcome,
  HookRecord,
  HookTestResult,
  PatchHookBody,
} from './schemas.ts'
import { hookSecretColumn } from './secret.ts'

type HookDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'config' | 'hooks'>

export const DEFAULT_TIMEOUT_MS = 2000

/** A deny for the sign-up and sign-in hooks, an allow (no claims) for the token's. */
export function defaultOnFailure(event: HookEvent): 'allow' | 'deny' {
  return event === 'custom_access_token' ? 'allow' : 'deny'
}

export function presentHook(row: store.Hook): HookRecord {
  return {
    id: row.id,
    event: row.event as HookEvent,
    url: row.url,
    enabled: row.enabled,
    timeoutMs: row.timeoutMs,
    onFailure: row.onFailure as HookRecord['onFailure'],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

async function findOr404(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findHook(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return row
}

export async function createHook(
  deps: HookDeps,
  tenantId: string,
  input: CreateHookBody,
  actor: Actor,
) {
  checkUrl(deps, input.url)
  const now = deps.clock.now()
  const id = uuidv7(now.getTime())
  const secret = newSecret()
  const row = await deps.db.transaction(async (tx) => {
    const created = await store.insertHook(tx, {
      tenantId,
      id,
      event: input.event,
      url: input.url,
      enabled: input.enabled ?? true,
      timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      onFailure: input.onFailure ?? defaultOnFailure(input.event),
      secretEnc: hookSecretColumn.seal(deps.cipher, { tenantId, id }, secret),
      createdAt: now,
      updatedAt: now,
    })
    if (!created) fail('hook_exists')
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'HookCreated',
        metadata: { hookId: id, event: input.event, url: auditedUrl(input.url) },
      },
    ])
    return created
  })
  deps.hooks.forget(tenantId)
  return { hook: presentHook(row), secret }
}

export function listHookPage(deps: Pick<Deps, 'db'>, tenantId: string, query: PageQuery) {
  return readPage(
    query,
    ({ limit, after }) => store.listHooks(deps.db, tenantId, { limit, after }),
    presentHook,
  )
}

export async function getHook(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  return { hook: presentHook(await findOr404(deps, tenantId, id)) }
}

export async function updateHook(
  deps: HookDeps,
  tenantId: string,
  id: string,
  input: PatchHookBody,
  actor: Actor,
) {
  await findOr404(deps, tenantId, id)
  if (input.url !== undefined) checkUrl(deps, input.url)
  const row = await deps.db.transaction(async (tx) => {
    const updated = await store.updateHook(tx, tenantId, id, {
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.enabled === undefined ? {} : { enabled: input.enabled }),
      ...(input.timeoutMs === undefined ? {} : { timeoutMs: input.timeoutMs }),
      ...(input.onFailure === undefined ? {} : { onFailure: input.onFailure }),
      updatedAt: deps.clock.now(),
    })
    if (!updated) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'HookUpdated', metadata: { hookId: id, changed: Object.keys(input) } },
    ])
    return updated
  })
  deps.hooks.forget(tenantId)
  return { hook: presentHook(row) }
}

export async function deleteHook(deps: HookDeps, tenantId: string, id: string, actor: Actor) {
  await findOr404(deps, tenantId, id)
  await deps.db.transaction(async (tx) => {
    const deleted = await store.deleteHook(tx, tenantId, id)
    if (!deleted) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'HookDeleted', metadata: { hookId: id, event: deleted.event } },
    ])
  })
  deps.hooks.forget(tenantId)
}

/**
 * POST hooks/{id}/test: a sample call of the hook's event (call.ts testCall), enabled or
 * not, answered with what it came to and logged among its calls as a test; a failure's
 * error, as thrown, goes to `log` only.
 *
 * Each is an outbound request to a URL of the admin's choosing, answered at once: without a
 * bound the route would sweep hosts and ports from where the service stands. So a tenant
 * has RATE_LIMIT_HOOK_TEST_CALLS of them (10 a minute), across its admins and API keys; the
 * point is taken once the hook is found (an unknown id costs nothing) and before the call,
 * so the 429 sends nothing.
 */
export async function testHook(
  deps: Pick<Deps, 'cipher' | 'clock' | 'config' | 'db' | 'hookLog' | 'limits'>,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  id: string,
  log: WarnLog,
): Promise<HookTestResult> {
  const hook = await findOr404(deps, tenant.id, id)
  await deps.limits.hit('hookTestCalls', tenant.id)
  const result = await testCall(deps, hook, tenant)
  logCallFailure(log, hook, hook.event as HookEvent, result, true)
  deps.hookLog.add({ tenantId: tenant.id, hookId: hook.id, test: true, result })
  await deps.hookLog.flushed()
  return {
    outcome: result.outcome,
    durationMs: Math.round(result.durationMs),
    ...(result.status === undefined ? {} : { status: result.status }),
    ...(result.message === undefined ? {} : { message: result.message }),
    ...(result.claims === undefined ? {} : { claims: result.claims }),
    ...(result.dropped === undefined ? {} : { droppedClaims: result.dropped }),
    ...(result.error === undefined ? {} : { error: result.error }),
  }
}

/**
 * GET hooks/{id}/calls: the kept calls, newest first. This instance's own calls are written
 * first, so the list is never behind them; another instance's show once it wrote them (a
 * round trip after their answer).
 */
export async function listCalls(
  deps: Pick<Deps, 'db' | 'hookLog'>,
  tenantId: string,
  id: string,
): Promise<{ items: HookCall[] }> {
  await findOr404(deps, tenantId, id)
  await deps.hookLog.flushed()
  const rows = await store.listHookCalls(deps.db, tenantId, id)
  return {
    items: rows.map((row) => ({
      at: row.at.toISOString(),
      outcome: row.outcome as HookOutcome,
      durationMs: row.durationMs,
      ...(row.status === null ? {} : { status: row.status }),
      test: row.test,
      ...(row.error === null ? {} : { error: row.error }),
    })),
  }
}
