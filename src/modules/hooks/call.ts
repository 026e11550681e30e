// Calling a hook (CONTRACT §21): a Standard Webhooks-signed POST through the egress guard,
// waited for up to the hook's timeoutMs. `before_sign_up` and `before_sign_in` answer a
// decision; `custom_access_token` answers claims. Whatever else comes back (a timeout, a
// non-2xx, an unreadable or ill-shaped answer, claims over 4 KiB) is a failure, settled
// by the hook's onFailure. Hooks are read through HookCache (cache.ts). `callHook` is the
// one path of a real call and of a test call (`testCall`, POST hooks/{id}/test): the same
// signing, guard, timeout, size bound and judgement; only what follows differs.
import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { EgressTimeout, egressFetch } from '../../lib/egress.ts'
import { egressFailure } from '../../lib/egress-failure.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { Actor, AuditRecorder } from '../audit/recorder.ts'
import { MEMBER_ROLE } from '../roles/permissions.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { sign } from '../webhooks/secret.ts'
import type { HookCache, HookCalls } from './cache.ts'
import type { HookCallResult } from './log.ts'
import type { Hook } from './queries.ts'
import type { HookEvent } from './schemas.ts'
import { hookSecretColumn } from './secret.ts'

/** How a sign-in or sign-up was attempted: `context.method` of a call. */
export type HookMethod =
  | 'password'
  | 'login_code'
  | 'magic_link'
  | 'passkey'
  | 'idp'
  | 'sso'
  | 'social'
  | 'invite'
  | 'signup'

/** The user a call is about: no id before a sign-up has created one. */
export interface HookUser {
  id?: string
  email: string
  role: string
  roles: string[]
}

/** A hook's answer may add at most this much of claims (their JSON, in bytes). */
export const MAX_CLAIMS_BYTES = 4096
/** A longer deny message is cut here. */
export const MAX_MESSAGE_LENGTH = 200
/** An answer is read up to this size; a larger one is a failure. */
const MAX_ANSWER_BYTES = 16 * 1024

/** Claims the service sets itself: a hook's are dropped (and the drop logged). */
export const RESERVED_CLAIMS: ReadonlySet<string> = new Set(
  'iss sub aud exp iat nbf jti tid role roles sid scope client_id org_id org_roles cnf act'.split(
    ' ',
  ),
)

/** What a call needs (Deps' members by name: this file is imported by sessions/service.ts). */
interface PostDeps {
  cipher: FieldCipher
  clock: Clock
  config: Pick<Config, 'webhookAllowPrivate'>
}

/** A real call's, which may audit a deny and is recorded. */
interface CallDeps extends PostDeps {
  audit: AuditRecorder
  db: Db
  hooks: HookCache
  hookCalls: HookCalls
}

interface Answer {
  status?: number
  body?: Record<string, unknown>
  /** Why it failed, in the service's words: the log's `error`. */
  error?: string
  timedOut?: boolean
  /** The request's error as thrown, for the server log only. */
  cause?: unknown
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

async function post(deps: PostDeps, hook: Hook, payload: object): Promise<Answer> {
  const secret = hookSecretColumn.open(deps.cipher, hook, hook.secretEnc)
  if (secret === undefined) return { error: 'the signing secret cannot be opened' }
  const body = JSON.stringify(payload)
  const id = `msg_${uuidv7(deps.clock.now().getTime())}`
  const timestamp = Math.floor(deps.clock.now().getTime() / 1000)
  const send = egressFetch({
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: hook.timeoutMs,
    maxBytes: MAX_ANSWER_BYTES,
    // A sign-in waits for the call: no new connection (and TLS handshake) each time.
    keepAlive: true,
  })
  const started = performance.now()
  let status: number | undefined
  try {
    const response = await send(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'tenant-auth-hooks/1',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(secret, id, timestamp, body),
      },
      body,
    })
    status = response.status
    if (status >= 300 && status < 400) return { status, error: `redirect (${status}) not followed` }
    if (status < 200 || status > 299) return { status, error: `HTTP ${status}` }
    const answer: unknown = JSON.parse(await response.text())
    return isObject(answer) ? { status, body: answer } : { status, error: NOT_AN_OBJECT }
  } catch (caught) {
    if (status !== undefined) return { status, error: NOT_AN_OBJECT }
    if (caught instanceof EgressTimeout || performance.now() - started >= hook.timeoutMs - 5) {
      return { timedOut: true, error: `no answer within ${hook.timeoutMs} ms`, cause: caught }
    }
    // Never the library's message, which names the address, port or certificate names the
    // service met (lib/egress-failure.ts): a fixed phrase, the error itself logged only.
    return { error: egressFailure(caught), cause: caught }
  }
}

const NOT_AN_OBJECT = 'the answer is not a JSON object'

function cleanMessage(said: unknown): string | undefined {
  if (typeof said !== 'string' || said.trim() === '') return undefined
  return said
    .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
    .trim()
    .slice(0, MAX_MESSAGE_LENGTH)
}

/** What the answer means for the hook's event; the same judgement for real and test calls. */
function judge(
  event: HookEvent,
  answer: Answer,
): Pick<HookCallResult, 'outcome' | 'error' | 'cause' | 'message' | 'claims' | 'dropped'> {
  if (!answer.body) {
    return {
      outcome: answer.timedOut ? 'timeout' : 'error',
      error: answer.error,
      ...(answer.cause === undefined ? {} : { cause: answer.cause }),
    }
  }
  if (event !== 'custom_access_token') {
    const { decision } = answer.body
    if (decision === 'allow') return { outcome: 'allow' }
    if (decision !== 'deny') {
      return { outcome: 'error', error: 'the decision is neither "allow" nor "deny"' }
    }
    const message = cleanMessage(answer.body.message)
    return { outcome: 'deny', ...(message ? { message } : {}) }
  }
  const { claims } = answer.body
  if (!isObject(claims)) return { outcome: 'error', error: 'the answer has no claims object' }
  if (Buffer.byteLength(JSON.stringify(claims)) > MAX_CLAIMS_BYTES) {
    return { outcome: 'error', error: `the claims are larger than ${MAX_CLAIMS_BYTES} bytes` }
  }
  const kept: Record<string, unknown> = {}
  const dropped: string[] = []
  for (const [name, value] of Object.entries(claims)) {
    if (RESERVED_CLAIMS.has(name)) dropped.push(name)
    else kept[name] = value
  }
  return { outcome: 'allow', claims: kept, ...(dropped.length > 0 ? { dropped } : {}) }
}

/**
 * Calls `hook` with `payload` and judges its answer: the one call path of real calls and
 * test calls (signed, through the egress guard, within the hook's timeout, its answer read
 * to 16 KiB). Records nothing: the caller does.
 */
export async function callHook(
  deps: PostDeps,
  hook: Hook,
  payload: object,
): Promise<HookCallResult> {
  const at = deps.clock.now()
  const started = performance.now()
  const answer = await post(deps, hook, payload)
  const durationMs = performance.now() - started
  return {
    at,
    durationMs,
    ...(answer.status === undefined ? {} : { status: answer.status }),
    ...judge(hook.event as HookEvent, answer),
  }
}

/**
 * A test call's user and request (POST hooks/{id}/test): no one. The address is one of
 * RFC 2606's, the IP one of RFC 5737's for documentation; a user that would exist has the
 * nil UUID.
 */
export const TEST_USER_EMAIL = 'test.user@example.com'
const TEST_ACTOR: Actor = {
  type: 'anonymous',
  id: null,
  ip: '192.0.2.1',
  userAgent: 'tenant-auth-hooks/1 (test call)',
}

/**
 * A test call: the hook's event with a sample body marked `test: true` (a real call never
 * has it), by the same path as a real call. Nothing rides on the answer: no one signs in
 * or up, no token is minted, nothing is audited, the metrics do not count it.
 */
export function testCall(
  deps: PostDeps,
  hook: Hook,
  tenant: Pick<Tenant, 'id' | 'slug'>,
): Promise<HookCallResult> {
  const event = hook.event as HookEvent
  const signUp = event === 'before_sign_up'
  const user: HookUser = {
    ...(signUp ? {} : { id: '00000000-0000-0000-0000-000000000000' }),
    email: TEST_USER_EMAIL,
    role: MEMBER_ROLE,
    roles: [],
  }
  const method = signUp ? 'signup' : 'password'
  return callHook(deps, hook, {
    ...payloadOf(event, tenant, user, TEST_ACTOR, method, undefined),
    test: true,
  })
}

function payloadOf(
  event: HookEvent,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  user: HookUser | null,
  actor: Actor,
  method: HookMethod | undefined,
  clientId: string | undefined,
) {
  return {
    event,
    tenant: { id: tenant.id, slug: tenant.slug },
    user,
    context: {
      ip: actor.ip,
      userAgent: actor.userAgent,
      ...(method ? { method } : {}),
      ...(clientId ? { clientId } : {}),
    },
  }
}

/**
 * `before_sign_up` or `before_sign_in`, when the tenant has one enabled: returns when it
 * allows; a deny (or a failure under onFailure deny) is audited HookDenied and thrown as
 * 403 hook_denied, with the hook's message when it gave one.
 */
export async function askHook(
  deps: CallDeps,
  tenant: Pick<Tenant, 'id' | 'slug'>,
  event: 'before_sign_up' | 'before_sign_in',
  user: HookUser,
  actor: Actor,
  method: HookMethod,
): Promise<void> {
  const hook = await deps.hooks.enabled(tenant.id, event)
  if (!hook) return
  const result = await callHook(
    deps,
    hook,
    payloadOf(event, tenant, user, actor, method, actor.servedClientId),
  )
  deps.hookCalls.record(hook, event, result)
  const { outcome, message } = result
  if (outcome === 'allow') return
  if (outcome !== 'deny' && hook.onFailure === 'allow') return
  await deps.audit.record(deps.db, tenant.id, actor, [
    {
      action: 'HookDenied',
      ...(user.id ? { userId: user.id } : {}),
      email: user.email,
      metadata: { hookId: hook.id, event, method, outcome },
    },
  ])
  fail('hook_denied', message ? { message } : {})
}

/**
 * `custom_access_token`, when the tenant has one enabled: the claims to merge into an
 * access token, reserved ones dropped (and logged). A failure under onFailure allow adds
 * nothing; under deny it is 403 hook_denied and no token is minted.
 */
export async function customClaims(
  deps: CallDeps & { log?: { warn: (o: object, m: string) => void } },
  tenant: Pick<Tenant, 'id' | 'slug'>,
  user: HookUser | null,
  actor: Actor,
  options: { method?: HookMethod; clientId?: string } = {},
): Promise<Record<string, unknown>> {
  const hook = await deps.hooks.enabled(tenant.id, 'custom_access_token')
  if (!hook) return {}
  const result = await callHook(
    deps,
    hook,
    payloadOf('custom_access_token', tenant, user, actor, options.method, options.clientId),
  )
  deps.hookCalls.record(hook, 'custom_access_token', result)
  const { outcome, claims, dropped } = result
  if (outcome !== 'allow' || !claims) {
    if (hook.onFailure === 'allow') return {}
    await deps.audit.record(deps.db, tenant.id, actor, [
      {
        action: 'HookDenied',
        ...(user?.id ? { userId: user.id } : {}),
        ...(user ? { email: user.email } : {}),
        metadata: { hookId: hook.id, event: 'custom_access_token', outcome },
      },
    ])
    fail('hook_denied')
  }
  if (dropped) {
    deps.log?.warn(
      { tenantId: tenant.id, hookId: hook.id, dropped },
      'custom_access_token hook: reserved claims dropped',
    )
  }
  return claims
}
