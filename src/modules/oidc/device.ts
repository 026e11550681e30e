// The device flow's storage (RFC 8628; CONTRACT §11, Flows). oidc-provider answers a poll
// with a device code past its lifetime `expired_token` (RFC 8628 §3.5), and a code typed
// on the user-code page after it "expired", only if its storage still hands the code
// over: the adapter answers no row past its expires_at, so a device code's row is kept
// this much longer than the code lives (oidc-provider checks the code's own `exp`).
import { TenantAdapter } from './adapter.ts'

/**
 * RFC 8628 §5.1, user-code brute forcing. A user code is short (eight letters of twenty,
 * about 34 bits) and a guess that finds a pending device authorization lets the guesser
 * sign the victim's device in to the guesser's account (or cancel it), so guesses are
 * counted twice, both taken before the lookup (routes.ts):
 *   - per client address across tenants, RATE_LIMIT_DEVICE_USER_CODES: one guesser;
 *   - per tenant across addresses, RATE_LIMIT_DEVICE_USER_CODES_PER_TENANT: a wrong code
 *     names no device code, but it can only land on one of the tenant's (the adapter reads
 *     the tenant's rows only), so this budget is what bounds, per device code, the guesses
 *     it meets in its life however many addresses guess: at most the budget per window, a
 *     code living 600 s meets at most two windows of 600 s, so with the default 1000 a
 *     pending code is found by a guess with a chance below 2000 / 20^8 ≈ 8 × 10^-8.
 * A code that finds its pending device authorization gives both points back, so people
 * entering the codes shown never spend either. Past a budget the request is turned into the
 * code form's GET, marked with the refusal under this key, and the form
 * (web/pages/device.ts) says so with a 429 and Retry-After: nothing is looked up. The
 * tenant's budget trades the page's availability under a spread attack for the codes'
 * safety, as the account budget of CONTRACT §6 does for a password.
 */
export const DEVICE_CODES_REFUSED = Symbol('deviceCodesRefused')

/** Which budget refused a code (the page words it), and the seconds to wait. */
export interface DeviceCodesRefusal {
  retryAfter: number
  by: 'address' | 'tenant'
}
/** Where routes.ts leaves, on the raw request, the refund of a code that was found. */
export const SETTLE_DEVICE_CODE = Symbol('settleDeviceCode')

export const DEVICE_CODE_ROW_GRACE = 3600

export class DeviceCodeAdapter extends TenantAdapter {
  override upsert(id: string, payload: Record<string, unknown>, expiresIn?: number) {
    return super.upsert(id, payload, expiresIn ? expiresIn + DEVICE_CODE_ROW_GRACE : expiresIn)
  }
}

/** The provider's adapter factory: the device codes' kept longer, every other model as is. */
export function adapterFor(deps: ConstructorParameters<typeof TenantAdapter>[0], tenantId: string) {
  return (model: string) =>
    model === 'DeviceCode'
      ? new DeviceCodeAdapter(deps, tenantId, model)
      : new TenantAdapter(deps, tenantId, model)
}
