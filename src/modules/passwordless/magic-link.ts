// Magic links (CONTRACT §20): with the tenant's `passwordlessMethod` `link` or `both`, the
// hosted pages' emailed sign-in may send a link instead of a code. The link carries a login
// code, sealed (AES-256-GCM, bound to the tenant) with the address and the SHA-256 of the
// asking browser's secret: opened in that browser it signs in with the code (the SPEC's
// verify-login-code, so once, and with the tenant's second factor); opened anywhere else it
// shows the code, to type where the sign-in began, and signs nobody in. The code is a login
// code like any other (one open per address, burned by the 5th wrong guess, spent once),
// valid 15 minutes instead of 10. The API's request-login-code is unchanged.
import { createHash } from 'node:crypto'
import type { Config } from '../../config.ts'
import type { Deps } from '../../deps.ts'
import { mailTranslator } from '../../i18n/mail.ts'
import { safeEqual } from '../../lib/crypto.ts'
import { escapeHtml, type Mail } from '../../lib/mailer.ts'
import type { Actor } from '../audit/recorder.ts'
import { isOpenCode } from '../codes/service.ts'
import { withTenantTemplate } from '../templates/seam.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { findUserByEmail } from '../users/reads.ts'
import { mailLoginCode } from './service.ts'

export const MAGIC_LINK_TTL_SECONDS = 15 * 60
const MINUTES = MAGIC_LINK_TTL_SECONDS / 60

/** What a link holds once opened. */
export interface MagicLink {
  email: string
  code: string
  /** SHA-256 (base64url) of the secret of the browser that asked. */
  browser: string
}

const aad = (tenantId: string) => `magic-link:${tenantId}`

/** The value a browser's secret is bound by: its SHA-256, never the secret itself. */
export const browserBinding = (secret: string) =>
  createHash('sha256').update(secret, 'utf8').digest('base64url')

/** Whether the link was asked for by the browser holding `secret`. */
export const askedBy = (link: MagicLink, secret: string | undefined) =>
  secret !== undefined && safeEqual(link.browser, browserBinding(secret))

/** The hosted page a link opens: `/t/{slug}/magic-link?token=…`. */
export const magicLinkUrl = (config: Pick<Config, 'publicUrl'>, slug: string, token: string) =>
  `${config.publicUrl}/t/${slug}/magic-link?token=${encodeURIComponent(token)}`

/**
 * Mails a sign-in link for `rawEmail`, bound to the browser whose secret is `browserSecret`.
 * The same budgets and answers as request-login-code (SPEC note 1: the same for a real, an
 * unknown and a suspended address, on the same fixed schedule); the caller has taken the
 * per-IP budget and checked the CAPTCHA, as the API's route does.
 */
export function requestMagicLink(
  deps: Pick<
    Deps,
    'audit' | 'cipher' | 'clock' | 'config' | 'db' | 'limits' | 'mailer' | 'sessions'
  >,
  tenant: Tenant,
  rawEmail: string,
  browserSecret: string,
  actor: Actor,
): Promise<void> {
  const code = { ttlSeconds: MAGIC_LINK_TTL_SECONDS, delivery: 'link' as const }
  return mailLoginCode(deps, tenant, rawEmail, actor, code, (sent, email) => {
    const link = { email, code: sent.code, browser: browserBinding(browserSecret) }
    const url = magicLinkUrl(deps.config, tenant.slug, sealMagicLink(deps, tenant.id, link))
    return magicLinkMail(tenant, { ...sent, requestLanguage: actor.language }, url)
  })
}

/** The token of a link, for 15 minutes from now. */
export function sealMagicLink(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  tenantId: string,
  link: MagicLink,
): string {
  const until = deps.clock.now().getTime() + MAGIC_LINK_TTL_SECONDS * 1000
  return deps.cipher.encrypt(JSON.stringify({ ...link, until }), aad(tenantId))
}

/** The link a token holds, while its 15 minutes last; undefined for anything else. */
export function openMagicLink(
  deps: Pick<Deps, 'cipher' | 'clock'>,
  tenantId: string,
  token: unknown,
): MagicLink | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 4096) return undefined
  try {
    const value = JSON.parse(deps.cipher.decrypt(token, aad(tenantId)))
    const { email, code, browser, until } = value ?? {}
    if (typeof email !== 'string' || typeof code !== 'string' || typeof browser !== 'string')
      return undefined
    if (typeof until !== 'number' || until <= deps.clock.now().getTime()) return undefined
    return { email, code, browser }
  } catch {
    return undefined
  }
}

/**
 * Whether the code a link carries is still the address's open login code: not spent,
 * burned, replaced or expired. Nothing changes (no wrong guess is counted).
 */
export async function linkStillOpen(
  deps: Pick<Deps, 'clock' | 'config' | 'db'>,
  tenant: Pick<Tenant, 'id'>,
  link: MagicLink,
): Promise<boolean> {
  const user = await findUserByEmail(deps.db, tenant.id, link.email)
  if (!user) return false
  return isOpenCode(deps, { tenantId: tenant.id, userId: user.id, purpose: 'login' }, link.code)
}

/** The `magic_link` mail, worded from the catalogues in the recipient's language. */
export function magicLinkMail(
  tenant: Pick<Tenant, 'id' | 'name' | 'locales' | 'defaultLocale'>,
  recipient: { to: string; locale?: string | null; requestLanguage?: string | null },
  url: string,
): Mail {
  const { t, locale } = mailTranslator(tenant, recipient.locale, recipient.requestLanguage)
  const subject = t('mail.magic.subject', { tenant: tenant.name.replace(/[\r\n\t]+/g, ' ') })
  const intro = t('mail.magic.intro', { tenant: tenant.name })
  const validity = t('mail.magic.validity', { minutes: MINUTES })
  const elsewhere = t('mail.magic.elsewhere')
  const ignore = t('mail.login.ignore')
  const text = [intro, '', url, '', validity, elsewhere, '', ignore, ''].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family:sans-serif">',
    `<p>${escapeHtml(intro)}</p>`,
    `<p><a href="${escapeHtml(url)}">${escapeHtml(t('mail.magic.button'))}</a></p>`,
    `<p>${escapeHtml(validity)} ${escapeHtml(elsewhere)}</p>`,
    `<p style="color:#666">${escapeHtml(ignore)}</p>`,
    '</body></html>',
  ].join('')
  // A tenant's own template for magic links in this language replaces the wording (§20).
  return withTenantTemplate(
    { to: recipient.to, subject, text, html },
    {
      tenantId: tenant.id,
      kind: 'magic_link',
      locale,
      values: {
        link: url,
        'tenant.name': tenant.name,
        'user.email': recipient.to,
        expiresInMinutes: String(MINUTES),
      },
    },
  )
}
