// RFC 8628 §3.5, the device's polling pace (issue 36 P1). oidc-provider answers every poll
// of a pending device code `authorization_pending`, however fast it comes (its `SlowDown`
// error exists but nothing throws it). Here each pending poll takes a point of
// RATE_LIMIT_DEVICE_CODE_POLLS for its device code; a poll past the budget is answered
// `slow_down` instead, which the RFC makes a variant of authorization_pending: nothing else
// changes, and the device adds 5 s to its interval. The device authorization response
// names the interval the budget allows (§3.2 `interval`; the RFC's default is 5 s), so a
// device that keeps to it never sees slow_down.
//
// The point is taken once the provider has answered pending, so only a device code that is
// real and pending is counted (an unknown one is invalid_grant, counted per address by
// routes.ts's tokenLimits); the device code is the bucket's key as its SHA-256 only.
import type { Deps } from '../../deps.ts'
import { hashToken } from '../../lib/crypto.ts'
import { AppError } from '../../lib/errors.ts'

interface PollContext {
  method: string
  status: number
  body?: unknown
  oidc?: { route?: string; params?: { grant_type?: unknown; device_code?: unknown } }
}

const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'

/** Seconds between polls that keep within the budget (RFC 8628 §3.2 `interval`). */
export function pollInterval(budget: { points: number; seconds: number }): number {
  return Math.max(1, Math.ceil(budget.seconds / budget.points))
}

/** A Provider middleware: announces the interval and answers too-fast polls slow_down. */
export function devicePollPace(deps: Pick<Deps, 'limits' | 'config'>, tenantId: string) {
  const interval = pollInterval(deps.config.limits.deviceCodePolls)
  return async function pollPace(ctx: PollContext, next: () => Promise<void>) {
    await next()
    if (ctx.method !== 'POST') return
    const body = ctx.body as Record<string, unknown> | undefined
    if (ctx.oidc?.route === 'device_authorization' && ctx.status === 200 && body?.device_code) {
      body.interval = interval
      return
    }
    const params = ctx.oidc?.params
    if (
      ctx.oidc?.route !== 'token' ||
      params?.grant_type !== DEVICE_CODE_GRANT ||
      typeof params.device_code !== 'string' ||
      body?.error !== 'authorization_pending'
    ) {
      return
    }
    try {
      await deps.limits.hit('deviceCodePolls', `${tenantId}:${hashToken(params.device_code)}`)
    } catch (error) {
      if (!(error instanceof AppError) || error.reason !== 'rate_limited') throw error
      ctx.body = {
        error: 'slow_down',
        error_description: 'polling too quickly: add 5 seconds to the interval (RFC 8628 §3.5)',
      }
    }
  }
}
