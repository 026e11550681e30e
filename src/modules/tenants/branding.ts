// A tenant's branding (CONTRACT §20): colours, dark mode, a dark logo and a favicon, the
// tenant's own CSS, and the privacy, terms and support links, applied to every hosted page
// (web/branding.ts) and mail (templates/resolve.ts). Set by PATCH tenant `branding`, null to
// remove. The pages draw button text in white, so the primary colour must keep WCAG 2.1's
// 4.5:1 against white (else 400 `insufficient_contrast`). The CSS is served as a stylesheet of
// the service's own origin, so the pages' CSP stays strict; what could load from elsewhere
// or end the stylesheet is refused here: `@import`, `url(` other than `data:image/`,
// `expression(`, `src(`, `</style`, and backslash escapes (which could spell any of them).
import { type Static, Type } from 'typebox'
import { fail } from '../../lib/errors.ts'

const Colour = (description: string) =>
  Type.String({ pattern: '^#[0-9a-fA-F]{6}$', minLength: 7, maxLength: 7, description })
const PageUrl = (description: string) =>
  Type.String({ minLength: 9, maxLength: 2048, pattern: '^https://', description })

/** At most 32 KiB of CSS. */
export const CUSTOM_CSS_MAX = 32 * 1024

export const BrandingSetting = Type.Union(
  [
    Type.Object(
      {
        primaryColor: Colour(
          'Buttons and links (#rrggbb); white button text must keep a contrast of 4.5:1 (WCAG 2.1), else 400 `insufficient_contrast`.',
        ),
        backgroundColor: Type.Optional(
          Colour(
            "The pages' background in light mode (#rrggbb); it must keep 4.5:1 with the pages' dark text, else 400 `insufficient_contrast`.",
          ),
        ),
        darkMode: Type.Optional(
          Type.Union([Type.Literal('auto'), Type.Literal('light'), Type.Literal('dark')], {
            description:
              "`auto` (the default) follows the browser's preference; `light` or `dark` always.",
          }),
        ),
        darkLogoUrl: Type.Optional(PageUrl('The logo on a dark page (an https image URL).')),
        faviconUrl: Type.Optional(PageUrl('The pages’ icon (an https image URL).')),
        customCss: Type.Optional(
          Type.String({
            maxLength: CUSTOM_CSS_MAX,
            description:
              'CSS added after the pages’ own (at most 32 KiB), served from this service. Refused: `@import`, `url(` other than `data:image/`, `expression(`, `src(`, `</style` and backslash escapes.',
          }),
        ),
        privacyPolicyUrl: Type.Optional(PageUrl('Linked from every page and mail.')),
        termsUrl: Type.Optional(PageUrl('Linked from every page and mail.')),
        supportEmail: Type.Optional(
          Type.String({
            format: 'email',
            maxLength: 254,
            description: 'Shown on every page and mail.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The look of the hosted pages and mails (CONTRACT §20); null: the defaults.' },
)
export type BrandingSetting = Static<typeof BrandingSetting>
export type Branding = NonNullable<BrandingSetting>

export const BrandingRecord = Type.Union(
  [
    Type.Object({
      primaryColor: Type.String(),
      backgroundColor: Type.Union([Type.String(), Type.Null()]),
      darkMode: Type.Union([Type.Literal('auto'), Type.Literal('light'), Type.Literal('dark')]),
      darkLogoUrl: Type.Union([Type.String(), Type.Null()]),
      faviconUrl: Type.Union([Type.String(), Type.Null()]),
      customCss: Type.Union([Type.String(), Type.Null()]),
      privacyPolicyUrl: Type.Union([Type.String(), Type.Null()]),
      termsUrl: Type.Union([Type.String(), Type.Null()]),
      supportEmail: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ],
  { description: 'The look of the hosted pages and mails (CONTRACT §20); null: the defaults.' },
)
export type BrandingRecord = Static<typeof BrandingRecord>

/** WCAG 2.1 relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}

/** The contrast ratio of white text on `hex` (WCAG 2.1: (L1 + 0.05) / (L2 + 0.05)). */
export const contrastWithWhite = (hex: string): number => 1.05 / (luminance(hex) + 0.05)

/** The pages' text colour in light mode (assets/pages.css `--ink`). */
const PAGE_INK = '#1d2330'

/** The contrast ratio of the pages' text on a background `hex`. */
export const contrastWithInk = (hex: string): number => {
  const [a, b] = [luminance(hex), luminance(PAGE_INK)].sort((x, y) => y - x)
  return (a + 0.05) / (b + 0.05)
}

const tooLittle = (path: string, ratio: number, against: string): never =>
  fail('insufficient_contrast', {
    details: {
      issues: [
        {
          path: `body.branding.${path}`,
          message: `contrast with ${against} is ${ratio.toFixed(2)}:1, below 4.5:1`,
        },
      ],
    },
  })

const invalid = (path: string, message: string): never =>
  fail('validation', { details: { issues: [{ path: `body.branding.${path}`, message }] } })

/** What the CSS may not hold, and why (the stylesheet is the service's own). */
const REFUSED_CSS: [RegExp, string][] = [
  [/@import/i, '@import is refused'],
  [/url\(\s*(?!["']?\s*data:image\/)/i, 'url( is refused other than data:image/'],
  [/expression\s*\(/i, 'expression( is refused'],
  [/(^|[^\w-])src\s*\(/i, 'src( is refused'],
  [/image-set\s*\(/i, 'image-set( is refused'],
  [/<\/style/i, '</style is refused'],
  [/\\/, 'backslash escapes are refused'],
]

/** The stored form of a PATCH's `branding` (null: none), or the refusal. */
export function checkBranding(setting: BrandingSetting): Branding | null {
  if (setting === null) return null
  const onWhite = contrastWithWhite(setting.primaryColor)
  if (onWhite < 4.5) tooLittle('primaryColor', onWhite, 'white button text')
  // The language picker and the links sit on the background in the pages' dark text.
  const background = setting.backgroundColor && contrastWithInk(setting.backgroundColor)
  if (background && background < 4.5) tooLittle('backgroundColor', background, 'the pages’ text')
  for (const [pattern, message] of REFUSED_CSS) {
    if (setting.customCss && pattern.test(setting.customCss)) invalid('customCss', message)
  }
  for (const key of ['darkLogoUrl', 'faviconUrl', 'privacyPolicyUrl', 'termsUrl'] as const) {
    const value = setting[key]
    if (value === undefined) continue
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return invalid(key, 'not an absolute URL')
    }
    if (url.protocol !== 'https:') invalid(key, 'must be https')
    if (url.username || url.password) invalid(key, 'must not carry credentials')
    // Its origin joins the pages' CSP: a host the URL parser lets through with `;` or `,`
    // would add directives of its own.
    if (!/^[a-z0-9.-]+(:\d+)?$/.test(url.host)) invalid(key, 'must name a plain host')
  }
  return {
    ...setting,
    primaryColor: setting.primaryColor.toLowerCase(),
    ...(setting.backgroundColor ? { backgroundColor: setting.backgroundColor.toLowerCase() } : {}),
  }
}

/** The record's `branding`: every field, null where unset. */
export function presentBranding(stored: Branding | null): BrandingRecord {
  if (!stored) return null
  return {
    primaryColor: stored.primaryColor,
    backgroundColor: stored.backgroundColor ?? null,
    darkMode: stored.darkMode ?? 'auto',
    darkLogoUrl: stored.darkLogoUrl ?? null,
    faviconUrl: stored.faviconUrl ?? null,
    customCss: stored.customCss ?? null,
    privacyPolicyUrl: stored.privacyPolicyUrl ?? null,
    termsUrl: stored.termsUrl ?? null,
    supportEmail: stored.supportEmail ?? null,
  }
}
