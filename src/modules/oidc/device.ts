// The device flow's storage (RFC 8628; CONTRACT §11, Flows). oidc-provider answers a poll
// with a device code past its lifetime `expired_token` (RFC 8628 §3.5), and a code typed
// on the user-code page after it "expired", only if its storage still hands the code
// over: the adapter answers no row past its expires_at, so a device code's row is kept
// this much longer than the code lives (oidc-provider checks the code's own `exp`).
import { TenantAdapter } from './adapter.ts'

/**
 * RFC 8628 §5.1, user-code brute forcing: each code entered at {issuer}/device takes a
 * point of RATE_LIMIT_DEVICE_USER_CODES per client address before the lookup, and one that
 * finds its pending device authorization gives it back (routes.ts). Past the budget the
 * request is turned into the code form's GET, marked with the seconds to wait under this
 * key, and the form (web/pages/device.ts) says so with a 429: nothing is looked up.
 */
export const DEVICE_CODES_REFUSED = Symbol('deviceCodesRefused')
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
