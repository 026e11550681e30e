// Webhooks (CONTRACT §13): the endpoints an Admin or an API key registers, each change
// audited in its transaction. The secret is shown once and stored sealed; rotating it keeps
// the old one signing beside the new for 24 hours. Deliveries are queued by the audit
// recorder (the outbox) and sent by the worker (worker.ts).
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { isUuid, uuidv7 } from '../../lib/ids.ts'
import { readPage } from '../../lib/paging.ts'
import type { PageQuery } from '../../schemas.ts'
import { AUDIT_ACTIONS } from '../audit/actions.ts'
import type { Actor } from '../audit/recorder.ts'
import { WEBHOOK_TEST, type WebhookTestEvent, webhookBody } from './events.ts'
import * as store from './queries.ts'
import type {
  CreateWebhookBody,
  DeliveryRecord,
  PatchWebhookBody,
  WebhookRecord,
} from './schemas.ts'
import { newSecret, openSecret, sealSecret } from './secret.ts'

type WebhookDeps = Pick<Deps, 'audit' | 'cipher' | 'clock' | 'db' | 'config'>

/** How long a replaced secret keeps signing beside the new one. */
export const SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000

const KNOWN_ACTIONS: ReadonlySet<string> = new Set(AUDIT_ACTIONS)

export function presentWebhook(row: store.Webhook): WebhookRecord {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    failingSince: row.failingSince?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }
}

export function presentDelivery(row: store.Delivery): DeliveryRecord {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType,
    status: row.status as DeliveryRecord['status'],
    attempts: row.attempts,
    lastResponseStatus: row.lastResponseStatus,
    lastError: row.lastError,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  }
}

function invalid(field: string, message: string): never {
  fail('validation', { details: { issues: [{ path: `body.${field}`, message }] } })
}

/** Exact audit action names, or ["*"] alone. */
function checkEvents(events: string[]) {
  if (events.includes('*')) {
    if (events.length !== 1) invalid('events', '"*" stands alone')
    return
  }
  const unknown = events.filter((e) => !KNOWN_ACTIONS.has(e))
  if (unknown.length > 0) invalid('events', `not audit actions: ${unknown.join(', ')}`)
}

/** An absolute https URL (http only with WEBHOOK_ALLOW_PRIVATE), no credentials or fragment. */
export function checkUrl(deps: Pick<Deps, 'config'>, value: string) {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    invalid('url', 'not an absolute URL')
  }
  const allowed = deps.config.webhookAllowPrivate ? ['https:', 'http:'] : ['https:']
  if (!allowed.includes(url.protocol)) invalid('url', 'must be https')
  if (url.username || url.password) invalid('url', 'must not carry credentials')
  if (value.includes('#')) invalid('url', 'must not have a fragment')
}

/**
 * The URL as the audit log keeps it (issue 36): the query's values and any userinfo masked,
 * since receivers often take a credential there (`?token=…`) and the audit log outlives
 * the endpoint, is exported and is itself delivered to webhooks. The endpoint's own record
 * keeps the URL whole.
 */
export function auditedUrl(value: string): string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return '(not a URL)'
  }
  const names = [...url.searchParams.keys()]
  const query =
    url.search === ''
      ? ''
      : `?${names.map((n) => `${encodeURIComponent(n)}=***`).join('&') || '***'}`
  const userinfo = url.username || url.password ? '***@' : ''
  return `${url.protocol}//${userinfo}${url.host}${url.pathname}${query}`
}

async function findOr404(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  if (!isUuid(id)) fail('not_found')
  const row = await store.findWebhook(deps.db, tenantId, id)
  if (!row) fail('not_found')
  return row
}

export async function createWebhook(
  deps: WebhookDeps,
  tenantId: string,
  input: CreateWebhookBody,
  actor: Actor,
) {
  checkUrl(deps, input.url)
  checkEvents(input.events)
  const now = deps.clock.now()
  const id = uuidv7(now.getTime())
  const secret = newSecret()
  const row = await deps.db.transaction(async (tx) => {
    const created = await store.insertWebhook(tx, {
      tenantId,
      id,
      url: input.url,
      events: input.events,
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      secretEnc: sealSecret(deps.cipher, tenantId, id, 'current', secret),
      createdAt: now,
      updatedAt: now,
    })
    await deps.audit.record(tx, tenantId, actor, [
      {
        action: 'WebhookCreated',
        metadata: { webhookId: id, url: auditedUrl(input.url), events: input.events },
      },
    ])
    return created
  })
  return { webhook: presentWebhook(row), secret }
}

export async function listWebhookPage(deps: Pick<Deps, 'db'>, tenantId: string, query: PageQuery) {
  return readPage(
    query,
    ({ limit, after }) => store.listWebhooks(deps.db, tenantId, { limit, after }),
    presentWebhook,
  )
}

export async function getWebhook(deps: Pick<Deps, 'db'>, tenantId: string, id: string) {
  return { webhook: presentWebhook(await findOr404(deps, tenantId, id)) }
}

export async function updateWebhook(
  deps: WebhookDeps,
  tenantId: string,
  id: string,
  input: PatchWebhookBody,
  actor: Actor,
) {
  await findOr404(deps, tenantId, id)
  if (input.url !== undefined) checkUrl(deps, input.url)
  if (input.events !== undefined) checkEvents(input.events)
  const now = deps.clock.now()
  const row = await deps.db.transaction(async (tx) => {
    const updated = await store.updateWebhook(tx, tenantId, id, {
      ...(input.url === undefined ? {} : { url: input.url }),
      ...(input.events === undefined ? {} : { events: input.events }),
      ...(input.description === undefined ? {} : { description: input.description }),
      // Enabling again starts a fresh count of failures.
      ...(input.enabled === undefined ? {} : { enabled: input.enabled, failingSince: null }),
      updatedAt: now,
    })
    if (!updated) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'WebhookUpdated', metadata: { webhookId: id, changed: Object.keys(input) } },
    ])
    return updated
  })
  return { webhook: presentWebhook(row) }
}

export async function deleteWebhook(deps: WebhookDeps, tenantId: string, id: string, actor: Actor) {
  await findOr404(deps, tenantId, id)
  await deps.db.transaction(async (tx) => {
    const deleted = await store.deleteWebhook(tx, tenantId, id)
    if (!deleted) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'WebhookDeleted', metadata: { webhookId: id, url: auditedUrl(deleted.url) } },
    ])
  })
}

export async function rotateWebhookSecret(
  deps: WebhookDeps,
  tenantId: string,
  id: string,
  actor: Actor,
) {
  const row = await findOr404(deps, tenantId, id)
  const now = deps.clock.now()
  const old = openSecret(deps.cipher, tenantId, id, 'current', row.secretEnc)
  const secret = newSecret()
  await deps.db.transaction(async (tx) => {
    const updated = await store.updateWebhook(tx, tenantId, id, {
      secretEnc: sealSecret(deps.cipher, tenantId, id, 'current', secret),
      // An old secret no key opens cannot sign any more: nothing to keep.
      previousSecretEnc:
        old === undefined ? null : sealSecret(deps.cipher, tenantId, id, 'previous', old),
      previousUntil: old === undefined ? null : new Date(now.getTime() + SECRET_OVERLAP_MS),
      updatedAt: now,
    })
    if (!updated) fail('not_found')
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'WebhookSecretRotated', metadata: { webhookId: id } },
    ])
  })
  return { secret }
}

export async function listDeliveryPage(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
  webhookId: string,
  query: PageQuery,
) {
  await findOr404(deps, tenantId, webhookId)
  return readPage(
    query,
    ({ limit, after }) => store.listDeliveries(deps.db, tenantId, webhookId, { limit, after }),
    presentDelivery,
  )
}

/** Sends the delivery again soon, under the same id (so the same `webhook-id`). */
export async function retryDelivery(
  deps: WebhookDeps,
  tenantId: string,
  webhookId: string,
  deliveryId: string,
) {
  await findOr404(deps, tenantId, webhookId)
  if (!isUuid(deliveryId)) fail('not_found')
  const found = await store.findDelivery(deps.db, tenantId, webhookId, deliveryId)
  if (!found) fail('not_found')
  const row = await store.updateDelivery(deps.db, tenantId, deliveryId, {
    status: 'Pending',
    nextAttemptAt: deps.clock.now(),
  })
  if (!row) fail('not_found')
  return { delivery: presentDelivery(row) }
}

/** Queues a WebhookTest event for this endpoint only; listed in its deliveries, not audited. */
export async function sendTestEvent(deps: WebhookDeps, tenantId: string, webhookId: string) {
  await findOr404(deps, tenantId, webhookId)
  const now = deps.clock.now()
  const eventId = uuidv7(now.getTime())
  const event: WebhookTestEvent = {
    id: eventId,
    action: WEBHOOK_TEST,
    metadata: { webhookId },
    createdAt: now.toISOString(),
  }
  const row = await store.insertDelivery(deps.db, {
    tenantId,
    id: uuidv7(now.getTime()),
    webhookId,
    eventId,
    eventType: WEBHOOK_TEST,
    payload: webhookBody(tenantId, event),
    status: 'Pending',
    attempts: 0,
    nextAttemptAt: now,
    createdAt: now,
  })
  return { delivery: presentDelivery(row) }
}
