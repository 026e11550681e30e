// Calling a hook (CONTRACT §21): a Standard Webhooks-signed POST through the egress guard,
// waited for up to the hook's timeoutMs. `before_sign_up` and `before_sign_in` answer a
// decision; `custom_access_token` answers claims. Whatever else comes back (a timeout, a
// non-2xx, an unreadable or ill-shaped answer, claims over 4 KiB) is a failure, settled
// by the hook's onFailure. Hooks are read through HookCache (cache.ts).
import type { Config } from '../../config.ts'
import type { Db } from '../../db/client.ts'
import type { Clock } from '../../lib/clock.ts'
import type { FieldCipher } from '../../lib/crypto.ts'
import { egressFetch } from '../../lib/egress.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { Actor, AuditRecorder } from '../audit/recorder.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { sign } from '../webhooks/secret.ts'
import type { HookCache, HookCalls, HookOutcome } from './cache.ts'
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
interface CallDeps {
  audit: AuditRecorder
  cipher: FieldCipher
  clock: Clock
  config: Pick<Config, 'webhookAllowPrivate'>
  db: Db
  hooks: HookCache
  hookCalls: HookCalls
}

interface Answer {
  ok: boolean
  /** Why it failed, for the audit row and the log. */
  failure?: 'timeout' | 'error'
  body?: Record<string, unknown>
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

async function post(deps: CallDeps, hook: Hook, payload: object): Promise<Answer> {
  const secret = hookSecretColumn.open(deps.cipher, hook, hook.secretEnc)
  if (secret === undefined) return { ok: false, failure: 'error' }
  const body = JSON.stringify(payload)
  const id = `msg_${uuidv7(deps.clock.now().getTime())}`
  const timestamp = Math.floor(deps.clock.now().getTime() / 1000)
  const send = egressFetch({
    allowPrivate: deps.config.webhookAllowPrivate,
    timeoutMs: hook.timeoutMs,
    maxBytes: MAX_ANSWER_BYTES,
  })
  const started = performance.now()
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
    if (response.status < 200 || response.status > 299) return { ok: false, failure: 'error' }
    const answer: unknown = JSON.parse(await response.text())
    return isObject(answer) ? { ok: true, body: answer } : { ok: false, failure: 'error' }
  } catch {
    const late = performance.now() - started >= hook.timeoutMs - 5
    return { ok: false, failure: late ? 'timeout' : 'error' }
  }
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
  const started = performance.now()
  const answer = await post(
    deps,
    hook,
    payloadOf(event, tenant, user, actor, method, actor.servedClientId),
  )
  const seconds = (performance.now() - started) / 1000
  let outcome: HookOutcome
  let message: string | undefined
  if (answer.ok && answer.body?.decision === 'allow') outcome = 'allow'
  else if (answer.ok && answer.body?.decision === 'deny') {
    outcome = 'deny'
    const said = answer.body.message
    if (typeof said === 'string' && said.trim() !== '') {
      message = said
        .replace(/[\p{Cc}\p{Cf}]/gu, ' ')
        .trim()
        .slice(0, MAX_MESSAGE_LENGTH)
    }
  } else outcome = answer.failure ?? 'error'
  deps.hookCalls.record(event, outcome, seconds)
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
  const started = performance.now()
  const answer = await post(
    deps,
    hook,
    payloadOf('custom_access_token', tenant, user, actor, options.method, options.clientId),
  )
  const seconds = (performance.now() - started) / 1000
  const claims = answer.body?.claims
  const fits =
    answer.ok && isObject(claims) && Buffer.byteLength(JSON.stringify(claims)) <= MAX_CLAIMS_BYTES
  const outcome: HookOutcome = fits ? 'allow' : (answer.failure ?? 'error')
  deps.hookCalls.record('custom_access_token', outcome, seconds)
  if (!fits) {
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
  const kept: Record<string, unknown> = {}
  const dropped: string[] = []
  for (const [name, value] of Object.entries(claims as Record<string, unknown>)) {
    if (RESERVED_CLAIMS.has(name)) dropped.push(name)
    else kept[name] = value
  }
  if (dropped.length > 0) {
    deps.log?.warn(
      { tenantId: tenant.id, hookId: hook.id, dropped },
      'custom_access_token hook: reserved claims dropped',
    )
  }
  return kept
}
