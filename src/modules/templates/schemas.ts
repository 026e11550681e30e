// Shapes of the mail template routes (CONTRACT §20, Mail templates).
import { type Static, Type } from 'typebox'
import { Locale, LocaleOut } from '../../i18n/schema.ts'
import { DateTime, ref, TenantSlugParams } from '../../schemas.ts'
import { MAIL_KINDS, PLACEHOLDERS } from './kinds.ts'

const placeholderList = Object.entries(PLACEHOLDERS)
  .map(([name, meaning]) => `\`{{${name}}}\` ${meaning}`)
  .join(' ')

const Kind = Type.Union(
  MAIL_KINDS.map((kind) => Type.Literal(kind)),
  {
    description:
      'The mail: login_code, email_otp, email_verification and password_reset need `{{code}}`; invitation, organization_invitation and magic_link need `{{link}}`; security_alert needs none. Any other value is 400 validation.',
  },
)
const KindOut = Type.String({ description: 'A mail kind (see the template routes).' })

export const TemplateParams = Type.Object({
  ...TenantSlugParams.properties,
  kind: Kind,
  locale: Locale,
})
export type TemplateParams = Static<typeof TemplateParams>

export const SUBJECT_MAX = 200
export const TEXT_MAX = 16 * 1024
export const HTML_MAX = 32 * 1024

const Subject = Type.String({
  minLength: 1,
  maxLength: SUBJECT_MAX,
  description: 'One line. A security alert’s is sent behind `Security alert: ` whatever it says.',
})
const Text = Type.String({
  minLength: 1,
  maxLength: TEXT_MAX,
  description: `The plain-text part. Placeholders: ${placeholderList}`,
})
const Html = Type.String({
  maxLength: HTML_MAX,
  description:
    'The HTML part, sanitized before it is stored (script, event handlers, `javascript:` URLs and forms removed); placeholders are HTML-escaped. Without it the HTML part is drawn from `text`.',
})

export const TemplateBody = Type.Object(
  { subject: Subject, text: Text, html: Type.Optional(Html) },
  {
    additionalProperties: false,
    examples: [
      {
        subject: 'Your code for {{tenant.name}}',
        text: 'Hello {{user.email}},\n\nyour code is {{code}}. It works for {{expiresInMinutes}} minutes.',
      },
    ],
  },
)
export type TemplateBody = Static<typeof TemplateBody>

export const PreviewBody = Type.Object(
  { subject: Type.Optional(Subject), text: Type.Optional(Text), html: Type.Optional(Html) },
  {
    additionalProperties: false,
    examples: [{}, { subject: 'Sign in to {{tenant.name}}', text: 'Your code: {{code}}' }],
    description:
      'Optional: a draft to render (subject and text together, html optional). Without one, the saved template, else the default mail.',
  },
)
export type PreviewBody = Static<typeof PreviewBody>

const TemplateComponent = Type.Object(
  {
    kind: KindOut,
    locale: LocaleOut,
    subject: Type.String(),
    text: Type.String(),
    html: Type.Union([Type.String(), Type.Null()], {
      description: 'As stored (sanitized); null: drawn from text.',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { $id: 'EmailTemplate', description: 'A tenant’s own wording of one mail in one language.' },
)
export const TemplateRecord = ref(TemplateComponent)
export type TemplateRecord = Static<typeof TemplateRecord>

const TemplateEnvelopeComponent = Type.Object(
  { template: TemplateRecord },
  { $id: 'EmailTemplateEnvelope', description: 'A mail template.' },
)
export const TemplateEnvelope = ref(TemplateEnvelopeComponent)

const Names = Type.Array(Type.String())
const TemplateListComponent = Type.Object(
  {
    items: Type.Array(TemplateRecord, { description: 'The customised templates.' }),
    kinds: Type.Array(
      Type.Object({
        kind: KindOut,
        required: Type.Array(Type.String(), {
          description: 'The placeholders its text (and HTML) must hold.',
        }),
        allowed: Names,
        hasDefault: Type.Boolean({ description: 'Whether a default mail can be previewed.' }),
      }),
      { description: 'Every kind with its required and allowed placeholders.' },
    ),
    locales: Type.Array(LocaleOut, { description: 'The locales a template may be written for.' }),
  },
  {
    $id: 'EmailTemplateList',
    description: 'The tenant’s customised templates, and what each kind takes.',
  },
)
export const TemplateList = ref(TemplateListComponent)

const RenderedComponent = Type.Object(
  { subject: Type.String(), text: Type.String(), html: Type.String() },
  { $id: 'EmailPreview', description: 'A mail as it would be sent, with sample values.' },
)
export const Rendered = ref(RenderedComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const templateComponents = [
  TemplateComponent,
  TemplateEnvelopeComponent,
  TemplateListComponent,
  RenderedComponent,
]
