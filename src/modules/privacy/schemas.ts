// Shapes of the personal-data routes (CONTRACT §9). The export's schema is the allowlist
// of what leaves: no hash, secret, TOTP secret, code or public key is in it.
import { Type } from 'typebox'
import { DateTime, NullableDateTime, PublicUser, ref } from '../../schemas.ts'
import { AuditEventRecord } from '../audit/schemas.ts'

const NullableString = (options: { description?: string } = {}) =>
  Type.Union([Type.String(), Type.Null()], options)

const ExportedSession = Type.Object({
  id: Type.String({ description: "The access tokens' `sid`." }),
  createdAt: DateTime,
  expiresAt: DateTime,
  revokedAt: Type.Union([DateTime, Type.Null()], {
    description: 'Null while the session is live.',
  }),
  lastUsedAt: Type.String({
    format: 'date-time',
    description: 'The last refresh, at first `createdAt`.',
  }),
  ip: NullableString({ description: 'Of the last refresh, or of the sign-in.' }),
  userAgent: NullableString({ description: 'Of the last refresh, or of the sign-in.' }),
  signInIp: NullableString(),
  signInUserAgent: NullableString(),
})

const ExportedIdentity = Type.Object({
  issuer: Type.String(),
  /** Set for an identity at an SSO connection (CONTRACT §12). */
  connectionId: Type.Optional(Type.String({ format: 'uuid' })),
  subject: Type.String(),
  email: NullableString(),
  createdAt: DateTime,
})

const ExportedPasskey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  deviceType: NullableString(),
  backedUp: Type.Boolean(),
  createdAt: DateTime,
  lastUsedAt: NullableDateTime,
})

const PersonalDataComponent = Type.Object(
  {
    user: PublicUser,
    sessions: Type.Array(ExportedSession, {
      description: 'Live and ended sessions, newest first (at most 1,000).',
    }),
    identities: Type.Array(ExportedIdentity, {
      description: 'Identities of the identity provider linked to the account.',
    }),
    passkeys: Type.Array(ExportedPasskey),
    recoveryCodesRemaining: Type.Integer({ minimum: 0 }),
    auditEvents: Type.Array(AuditEventRecord, {
      description:
        'Events about the user or made by the user, newest first (at most 10,000; the `X-Export-Truncated` header names a list that was cut).',
    }),
  },
  {
    $id: 'PersonalDataExport',
    description: 'Everything the service holds about the signed-in user (no secret, no hash).',
  },
)
export const PersonalDataExport = ref(PersonalDataComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const privacyComponents = [PersonalDataComponent]
