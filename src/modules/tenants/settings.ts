// GET and PATCH tenant (SPEC, Administration; CONTRACT §2, Tenant record): the record and
// the settings an admin may change, with TenantUpdated naming the fields that changed.
import type { Config } from '../../config.ts'
import type { Deps } from '../../deps.ts'
import { offeredLocales, supportedLocales } from '../../i18n/index.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import type { CaptchaRecord } from '../captcha/schemas.ts'
import { captchaColumns, presentCaptcha } from '../captcha/settings.ts'
import { forgetTenantDevices } from '../signin/remembered-devices.ts'
import { logoUrl } from '../users/present.ts'
import { type BrandingRecord, checkBranding, presentBranding } from './branding.ts'
import type { Tenant } from './queries.ts'
import { findTenantById, updateTenant } from './queries.ts'
import type { TenantPatchBody } from './schemas.ts'

export interface TenantRecord {
  id: string
  slug: string
  name: string
  plan: string
  mfaPolicy: string
  authPolicy: string
  passwordlessJitSignup: boolean
  passwordlessMethod: string
  idpOauthEnabled: boolean
  idpClientId: string
  hasIdpClientSecret: boolean
  requireVerifiedEmail: boolean
  securityNotifications: boolean
  passkeysEnabled: boolean
  dynamicClientRegistration: boolean
  breachedPasswordPolicy: string
  captcha: CaptchaRecord
  mfaRememberDays: number
  branding: BrandingRecord
  logoUrl: string
  defaultLocale: string
  locales: string[]
  createdAt: string
}

const PATCHABLE = [
  'name',
  'mfaPolicy',
  'authPolicy',
  'passwordlessJitSignup',
  'passwordlessMethod',
  'idpOauthEnabled',
  'requireVerifiedEmail',
  'securityNotifications',
  'passkeysEnabled',
  'dynamicClientRegistration',
  'breachedPasswordPolicy',
  'mfaRememberDays',
  'defaultLocale',
  'locales',
] as const satisfies readonly (keyof TenantPatchBody & keyof Tenant)[]

/**
 * The record as GET and PATCH show it; the client secret only as a flag. SPEC types
 * idpClientId and logoUrl as required strings, so an absent one is "", never null.
 */
export function presentTenant(config: Config, tenant: Tenant, hasLogo: boolean): TenantRecord {
  return {
    id: tenant.id,
    slug: tenant.slug,
    name: tenant.name,
    plan: tenant.plan,
    mfaPolicy: tenant.mfaPolicy,
    authPolicy: tenant.authPolicy,
    passwordlessJitSignup: tenant.passwordlessJitSignup,
    passwordlessMethod: tenant.passwordlessMethod,
    idpOauthEnabled: tenant.idpOauthEnabled,
    idpClientId: tenant.idpClientId ?? '',
    hasIdpClientSecret: tenant.idpClientSecretEnc !== null,
    requireVerifiedEmail: tenant.requireVerifiedEmail,
    securityNotifications: tenant.securityNotifications,
    passkeysEnabled: tenant.passkeysEnabled,
    dynamicClientRegistration: tenant.dynamicClientRegistration,
    breachedPasswordPolicy: tenant.breachedPasswordPolicy,
    captcha: presentCaptcha(tenant),
    mfaRememberDays: tenant.mfaRememberDays,
    branding: presentBranding(tenant.branding),
    logoUrl: logoUrl(config, tenant.slug, hasLogo),
    defaultLocale: tenant.defaultLocale,
    locales: offeredLocales(tenant.locales),
    createdAt: tenant.createdAt.toISOString(),
  }
}

export async function readTenant(
  deps: Pick<Deps, 'config' | 'db'>,
  tenantId: string,
): Promise<TenantRecord> {
  // Read from the database, not the per-instance cache, so an admin sees what is stored.
  const found = await findTenantById(deps.db, tenantId)
  if (!found) fail('tenant_not_found')
  return presentTenant(deps.config, found.tenant, found.hasLogo)
}

const same = (a: unknown, b: unknown) =>
  Array.isArray(a) || Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : a === b

/**
 * CONTRACT §20: the tenant's `defaultLocale` is always among its `locales`. Answers the
 * `locales` sent in the service's order (stored so; never set, null, means every supported
 * locale, a catalogue added later included); a default left out is 400 `validation` naming
 * the field sent (`defaultLocale` when both are).
 */
function checkLocales(tenant: Tenant, patch: TenantPatchBody): string[] | undefined {
  const locales = patch.locales
    ? supportedLocales.filter((l) => (patch.locales as string[]).includes(l))
    : undefined
  const defaultLocale = patch.defaultLocale ?? tenant.defaultLocale
  if (!(locales ?? offeredLocales(tenant.locales)).includes(defaultLocale)) {
    const path = patch.defaultLocale !== undefined ? 'body.defaultLocale' : 'body.locales'
    fail('validation', {
      details: { issues: [{ path, message: 'defaultLocale must be one of locales' }] },
    })
  }
  return locales
}

/**
 * Applies the fields that differ from what is stored, all or nothing. The row is locked
 * so that the check of the OAuth credentials and the audit's list of changed fields
 * describe exactly what was written.
 */
export async function patchTenant(
  deps: Pick<Deps, 'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'tenants'>,
  tenantId: string,
  patch: TenantPatchBody,
  actor: Actor,
): Promise<TenantRecord> {
  const record = await deps.db.transaction(async (tx) => {
    const found = await findTenantById(tx, tenantId, { lock: true })
    if (!found) fail('tenant_not_found')
    const { tenant } = found
    // CONTRACT §2: idpOauthEnabled can be turned on only once credentials are stored.
    if (patch.idpOauthEnabled === true && !(tenant.idpClientId && tenant.idpClientSecretEnc)) {
      fail('idp_not_configured')
    }
    const locales = checkLocales(tenant, patch)
    const wanted = { ...patch, ...(locales ? { locales } : {}) }
    const changes: Partial<
      Record<(typeof PATCHABLE)[number] | 'captcha' | 'branding', { from: unknown; to: unknown }>
    > = {}
    for (const field of PATCHABLE) {
      const value = wanted[field]
      if (value !== undefined && !same(value, tenant[field])) {
        changes[field] = { from: tenant[field], to: value }
      }
    }
    // CONTRACT §21: the CAPTCHA is one field of four columns; its audit shows the record's
    // form (never the secret, only whether one is stored or a new one was sent).
    const captcha =
      patch.captcha === undefined
        ? undefined
        : captchaColumns(deps.cipher, tenant.id, tenant, patch.captcha)
    const newSecret = patch.captcha?.secret !== undefined
    if (captcha && (newSecret || !same(presentCaptcha(captcha), presentCaptcha(tenant)))) {
      changes.captcha = {
        from: presentCaptcha(tenant),
        to: { ...presentCaptcha(captcha), ...(newSecret ? { secretChanged: true } : {}) },
      }
    }
    // CONTRACT §20: the branding as one field, checked (contrast, CSS, links) before storing.
    const branding = patch.branding === undefined ? undefined : checkBranding(patch.branding)
    if (branding !== undefined) {
      const [from, to] = [presentBranding(tenant.branding), presentBranding(branding)]
      if (JSON.stringify(from) !== JSON.stringify(to)) {
        // The audit row says whether the CSS changed, not the CSS (up to 32 KiB each way).
        const brief = (b: BrandingRecord) => b && { ...b, customCss: b.customCss !== null }
        changes.branding = {
          from: brief(from),
          to: to && {
            ...brief(to),
            ...(from?.customCss !== to.customCss ? { customCssChanged: true } : {}),
          },
        }
      }
    }
    const fields = Object.keys(changes)
    if (fields.length === 0) return presentTenant(deps.config, tenant, found.hasLogo)
    const values = Object.fromEntries(
      Object.entries(changes)
        .filter(([k]) => k !== 'captcha' && k !== 'branding')
        .map(([k, v]) => [k, v.to]),
    )
    const updated = await updateTenant(tx, tenantId, {
      ...values,
      ...(changes.captcha ? captcha : {}),
      ...(changes.branding ? { branding } : {}),
      updatedAt: deps.clock.now(),
    })
    if (!updated) fail('tenant_not_found')
    // CONTRACT §21: turning remembered devices off forgets every one of them.
    if (changes.mfaRememberDays && updated.mfaRememberDays === 0) {
      await forgetTenantDevices(tx, tenantId)
    }
    await deps.audit.record(tx, tenantId, actor, [
      { action: 'TenantUpdated', metadata: { fields, changes } },
    ])
    return presentTenant(deps.config, updated, found.hasLogo)
  })
  deps.tenants.forget(record.slug)
  return record
}
