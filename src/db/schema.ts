// The whole data model. Every row that belongs to a tenant carries `tenant_id`, leads its
// primary key with it and is reached through indexes led by it, so the data can later be
// distributed by tenant (for example with Citus, distribution column tenant_id).
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import { MEMBER_ROLE } from '../modules/roles/permissions.ts'
import type { Branding } from '../modules/tenants/branding.ts'
import {
  bigint,
  boolean,
  customType,
  doublePrecision,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  sql,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from './orm.ts'

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
})

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** tenant_id of a row that goes with its tenant (ON DELETE CASCADE). */
const tenantRef = () =>
  uuid('tenant_id')
    .notNull()
    .references((): AnyPgColumn => tenants.id, { onDelete: 'cascade' })

/**
 * The columns a tenant's own record starts with: tenant_id (the row goes with its tenant)
 * and the row's id; its primary key is (tenant_id, id) (`tenantListed`).
 */
const tenantOwned = () => ({ tenantId: tenantRef(), id: uuid('id').notNull() })

/** When a record was made and last changed. */
const timestamps = () => ({
  createdAt: ts('created_at').notNull(),
  updatedAt: ts('updated_at').notNull(),
})

/**
 * The primary key (tenant_id, id) and the index an admin list walks, newest page by
 * keyset (tenant, created_at, id): `<table>_tenant_created`.
 */
const tenantListed = (
  table: string,
  t: { tenantId: AnyPgColumn; id: AnyPgColumn; createdAt: AnyPgColumn },
) => [
  primaryKey({ columns: [t.tenantId, t.id] }),
  index(`${table}_tenant_created`).on(t.tenantId, t.createdAt, t.id),
]

/** A row of a user's: (tenant_id, user_id) references the user and goes with it. */
const ownedByUser = (t: { tenantId: AnyPgColumn; userId: AnyPgColumn }) =>
  foreignKey({
    columns: [t.tenantId, t.userId],
    foreignColumns: [users.tenantId, users.id],
  }).onDelete('cascade')

export const tenants = pgTable('tenants', {
  id: uuid('id').primaryKey(),
  slug: text('slug').notNull().unique(),
  name: text('name').notNull(),
  plan: text('plan').notNull().default('Free'),
  mfaPolicy: text('mfa_policy').notNull().default('Disabled'),
  authPolicy: text('auth_policy').notNull().default('PasswordOnly'),
  passwordlessJitSignup: boolean('passwordless_jit_signup').notNull().default(false),
  /** code | link | both: what the hosted pages' emailed sign-in sends (CONTRACT §20). */
  passwordlessMethod: text('passwordless_method').notNull().default('code'),
  /** off | block (CONTRACT §21). */
  breachedPasswordPolicy: text('breached_password_policy').notNull().default('block'),
  /** Days a device that gave a second factor skips it; 0 = off (CONTRACT §21). */
  mfaRememberDays: integer('mfa_remember_days').notNull().default(0),
  idpOauthEnabled: boolean('idp_oauth_enabled').notNull().default(false),
  idpClientId: text('idp_client_id'),
  /** AES-256-GCM under ENCRYPTION_KEYS (lib/crypto FieldCipher). */
  idpClientSecretEnc: text('idp_client_secret_enc'),
  /** CONTRACT §9: password sign-in of an unverified address answers 403 email_not_verified. */
  requireVerifiedEmail: boolean('require_verified_email').notNull().default(false),
  /** CONTRACT §9: "Security alert:" mails to users. */
  securityNotifications: boolean('security_notifications').notNull().default(true),
  /** CONTRACT §9: passkey registration and sign-in. */
  passkeysEnabled: boolean('passkeys_enabled').notNull().default(true),
  /** CONTRACT §11: RFC 7591 registration open at the tenant's issuer. */
  dynamicClientRegistration: boolean('dynamic_client_registration').notNull().default(false),
  /** CONTRACT §20: the locale negotiation falls back to; always among `locales`. */
  defaultLocale: text('default_locale').notNull().default('en'),
  /** CONTRACT §20: the locales the tenant's pages and mails may speak; null: every supported one. */
  locales: text('locales').array(),
  /** CONTRACT §21: altcha | turnstile | hcaptcha | recaptcha; null: no CAPTCHA. */
  captchaProvider: text('captcha_provider'),
  /** The third-party provider's public site key (null for altcha). */
  captchaSiteKey: text('captcha_site_key'),
  /** The third-party provider's secret, sealed (captcha/secret.ts); write-only. */
  captchaSecretEnc: text('captcha_secret_enc'),
  /** The actions that ask for a CAPTCHA: sign_up, sign_in, password_reset, login_code. */
  captchaOn: text('captcha_on').array(),
  /** CONTRACT §20: colours, dark mode, icons, CSS and links (tenants/branding.ts); null: none. */
  branding: jsonb('branding').$type<Branding>(),
  /** reCAPTCHA v3's lowest score let through (0..1); null for the other providers. */
  captchaMinScore: doublePrecision('captcha_min_score'),
  ...timestamps(),
  deletedAt: ts('deleted_at'),
})

export const tenantLogos = pgTable('tenant_logos', {
  tenantId: uuid('tenant_id')
    .primaryKey()
    .references(() => tenants.id, { onDelete: 'cascade' }),
  mimeType: text('mime_type').notNull(),
  data: bytea('data').notNull(),
  etag: text('etag').notNull(),
  updatedAt: ts('updated_at').notNull(),
})

export const users = pgTable(
  'users',
  {
    ...tenantOwned(),
    email: text('email').notNull(),
    /** NFC + trim + lower-case: one account per address per tenant (lib/email.ts). */
    emailNormalized: text('email_normalized').notNull(),
    passwordHash: text('password_hash'),
    status: text('status').notNull(),
    role: text('role').notNull(),
    emailVerified: boolean('email_verified').notNull().default(false),
    /** The password was found in a breach corpus at a sign-in (CONTRACT §21). */
    passwordBreached: boolean('password_breached').notNull().default(false),
    /** Sealed TOTP secret; with totp_enabled false it is an enrolment not yet verified. */
    totpSecretEnc: text('totp_secret_enc'),
    totpEnabled: boolean('totp_enabled').notNull().default(false),
    /** The last accepted RFC 6238 time step: a step is never accepted twice. */
    totpLastStep: bigint('totp_last_step', { mode: 'number' }),
    ...timestamps(),
    lastLoginAt: ts('last_login_at'),
    /**
     * When the account's failure lock (CONTRACT §6 ACCOUNT_FAILURES, §21) ends: written by the
     * sign-in guard when it refuses, cleared by an unlock or a successful sign-in.
     */
    lockedUntil: ts('locked_until'),
    deletedAt: ts('deleted_at'),
    /** Profile fields (CONTRACT §14): set by PATCH users, SCIM and import; null when unknown. */
    displayName: text('display_name'),
    givenName: text('given_name'),
    familyName: text('family_name'),
    /** The provisioning client's own id for the user (SCIM externalId); not unique (README). */
    externalId: text('external_id'),
    /** CONTRACT §20: the user's language (a supported locale), null when unset. */
    locale: text('locale'),
  },
  (t) => [
    ...tenantListed('users', t),
    // Soft-deleted users free their address.
    uniqueIndex('users_tenant_email_live')
      .on(t.tenantId, t.emailNormalized)
      .where(sql`deleted_at IS NULL`),
    index('users_deleted_at').on(t.deletedAt).where(sql`deleted_at IS NOT NULL`),
    // SCIM clients look users up by their own id (`filter=externalId eq "…"`, §14).
    index('users_tenant_external_id')
      .on(t.tenantId, t.externalId)
      .where(sql`deleted_at IS NULL AND external_id IS NOT NULL`),
  ],
)

/**
 * Live accounts of one tenant whose addresses became the same once normalised to NFC
 * (migration 0002). They are reported here, never merged: each keeps its old address
 * until an operator decides (README, Upgrading).
 */
export const emailConflicts = pgTable(
  'email_conflicts',
  {
    tenantId: uuid('tenant_id').notNull(),
    userId: uuid('user_id').notNull(),
    emailNormalized: text('email_normalized').notNull(),
    nfc: text('nfc').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userId] })],
)

/** A session is one refresh-token family: every token descended from one sign-in. */
export const sessions = pgTable(
  'sessions',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    revokedAt: ts('revoked_at'),
    revokeReason: text('revoke_reason'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    // The last time this session proved a sign-in factor again (POST me/reauthenticate,
    // CONTRACT §16); the sign-in itself is created_at. A refresh changes neither.
    reauthenticatedAt: ts('reauthenticated_at'),
    // Whether the sign-in that opened this session proved a second factor (TOTP, an emailed
    // code or a recovery code): an organization with mfaRequired (CONTRACT §18) mints its
    // tokens only for such a session. A refresh keeps it.
    secondFactor: boolean('second_factor').notNull().default(false),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    ownedByUser(t),
    // A user's sessions (led by tenant and user), and the new-device check's walk over the
    // user's distinct (ip, user agent) pairs with each one's latest expiry (sessions/
    // queries.ts): one index probe a pair, however many sessions the user has.
    index('sessions_tenant_user_device').on(
      t.tenantId,
      t.userId,
      sql`coalesce(${t.ip}, '')`,
      sql`coalesce(${t.userAgent}, '')`,
      t.expiresAt,
    ),
    // The revocation feed every instance polls (plugins/revocations).
    index('sessions_revoked_at').on(t.revokedAt).where(sql`revoked_at IS NOT NULL`),
  ],
)

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    tenantId: uuid('tenant_id').notNull(),
    /** SHA-256 of the opaque token; the token itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    sessionId: uuid('session_id').notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    /** Set when rotated: presenting it again is reuse and revokes the family. */
    usedAt: ts('used_at'),
    /**
     * Where the token was issued (the sign-in or the refresh that made it): the newest token
     * of a session gives its lastUsedAt, ip and userAgent (CONTRACT §9, GET me/sessions),
     * without a write to the session row on every refresh.
     */
    ip: text('ip'),
    userAgent: text('user_agent'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.tokenHash] }),
    foreignKey({
      columns: [t.tenantId, t.sessionId],
      foreignColumns: [sessions.tenantId, sessions.id],
    }).onDelete('cascade'),
    index('refresh_tokens_session').on(t.tenantId, t.sessionId),
  ],
)

/** The text GET audit's `search` matches; the audit queries repeat it verbatim so the index applies. */
export const AUDIT_SEARCH_TEXT = "(action || ' ' || coalesce(email, '') || ' ' || metadata::text)"

export const auditEvents = pgTable(
  'audit_events',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    action: text('action').notNull(),
    actorType: text('actor_type').notNull(),
    actorId: text('actor_id'),
    /** The user the event concerns (kept after that user is purged). */
    userId: uuid('user_id'),
    email: text('email'),
    ip: text('ip'),
    userAgent: text('user_agent'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index('audit_tenant_created').on(t.tenantId, t.createdAt.desc(), t.id.desc()),
    index('audit_tenant_action_created').on(t.tenantId, t.action, t.createdAt.desc(), t.id.desc()),
    index('audit_tenant_user_created').on(t.tenantId, t.userId, t.createdAt.desc(), t.id.desc()),
    // Audit search (CONTRACT §2: action, email and metadata text) as a trigram index, so a
    // substring search stays an index lookup on a tenant with a million events. Led by the
    // tenant like every index here (as a one-element array: GIN has no operator class for
    // a bare uuid without an extension), so that a tenant's search reads that tenant's
    // entries, not every tenant's that share the term's trigrams (migration 0003).
    index('audit_tenant_search_trgm').using(
      'gin',
      sql.raw('(ARRAY[tenant_id])'),
      sql.raw(`${AUDIT_SEARCH_TEXT} gin_trgm_ops`),
    ),
  ],
)

export const apiKeys = pgTable(
  'api_keys',
  {
    ...tenantOwned(),
    name: text('name').notNull(),
    environment: text('environment').notNull(),
    /** The first 12 characters of the plaintext, to tell keys apart. */
    prefix: text('prefix').notNull(),
    /** SHA-256 of the whole key (256 random bits). */
    keyHash: text('key_hash').notNull(),
    /**
     * The tenant permissions the key holds (CONTRACT §17), sorted; null for a key created
     * before keys had permissions (by an Admin, so holding every one, as it did then).
     */
    permissions: jsonb('permissions').$type<string[]>(),
    createdBy: text('created_by'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at'),
    lastUsedAt: ts('last_used_at'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    ...tenantListed('api_keys', t),
    uniqueIndex('api_keys_tenant_hash').on(t.tenantId, t.keyHash),
  ],
)

export const invites = pgTable(
  'invites',
  {
    ...tenantOwned(),
    email: text('email').notNull(),
    emailNormalized: text('email_normalized').notNull(),
    role: text('role').notNull(),
    /** Custom role names (CONTRACT §17) given when accepted, sorted; a deleted one is skipped. */
    roles: jsonb('roles').$type<string[]>().notNull().default([]),
    /** SHA-256 of the token; accept is not tenant-scoped, so this is unique globally. */
    tokenHash: text('token_hash').notNull().unique(),
    invitedBy: text('invited_by'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    acceptedUserId: uuid('accepted_user_id'),
    revokedAt: ts('revoked_at'),
    /** Set once, when the first late accept records InviteExpired. */
    expiredRecordedAt: ts('expired_recorded_at'),
  },
  (t) => [
    ...tenantListed('invites', t),
    index('invites_tenant_email').on(t.tenantId, t.emailNormalized),
  ],
)

/** Emailed one-time codes: passwordless login codes and email OTP second factors. */
export const oneTimeCodes = pgTable(
  'one_time_codes',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    userId: uuid('user_id').notNull(),
    /** 'login' (first factor), 'mfa' (email OTP second factor), 'reset' (password reset) or 'verify' (email verification). */
    purpose: text('purpose').notNull(),
    /** Keyed hash of the 6-digit code. */
    codeHash: text('code_hash').notNull(),
    /** 'link': the code a magic link carries (CONTRACT §20); null: mailed as a code. */
    delivery: text('delivery'),
    attempts: integer('attempts').notNull().default(0),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    /** Spent, burned or superseded: never valid again. */
    closedAt: ts('closed_at'),
    closedReason: text('closed_reason'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    ownedByUser(t),
    index('codes_tenant_user_open')
      .on(t.tenantId, t.userId, t.purpose)
      .where(sql`closed_at IS NULL`),
  ],
)

/**
 * A user's identity at an outside source, one table for every source (CONTRACT §19): the
 * SPEC's identity provider (`kind` 'idp', `source` its issuer) and the SSO connections
 * (§12, 'sso', `source` the connection's id as text; 'social' connections will be the same).
 * Keyed by (kind, source, subject), never by email alone: the same subject at another source
 * is another identity. `id` names one identity of the user (the account's list and removal).
 * No foreign key reaches the connection (`source` is text for every kind): deleting one
 * deletes its identities in the same transaction (federation/service.ts deleteConnection).
 */
export const identities = pgTable(
  'identities',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull().defaultRandom(),
    kind: text('kind').$type<'idp' | 'sso' | 'social'>().notNull(),
    source: text('source').notNull(),
    /** The OIDC `sub`, the SAML NameID, or the provider's user id. */
    subject: text('subject').notNull(),
    userId: uuid('user_id').notNull(),
    email: text('email'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('identities_key').on(t.tenantId, t.kind, t.source, t.subject),
    ownedByUser(t),
    index('identities_user').on(t.tenantId, t.userId),
  ],
)

/** OAuth authorization requests in flight: single-use, tenant-bound, ten minutes. */
export const oauthStates = pgTable(
  'oauth_states',
  {
    tenantId: tenantRef(),
    stateHash: text('state_hash').notNull(),
    codeVerifier: text('code_verifier').notNull(),
    nonce: text('nonce').notNull(),
    /** The SSO connection (CONTRACT §12) a state was made for; null for the SPEC's idp. */
    connectionId: uuid('connection_id'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.stateHash] })],
)

/**
 * MFA recovery codes (CONTRACT §9): ten per user, shown once, stored only as keyed hashes;
 * a used code keeps its row (used_at) until the set is regenerated or TOTP is disabled.
 */
export const recoveryCodes = pgTable(
  'recovery_codes',
  {
    tenantId: uuid('tenant_id').notNull(),
    userId: uuid('user_id').notNull(),
    codeHash: text('code_hash').notNull(),
    createdAt: ts('created_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.userId, t.codeHash] }), ownedByUser(t)],
)

/**
 * Remembered devices (CONTRACT §21, mfaRememberDays): a device that gave a second factor
 * and asked to be remembered skips it until `expires_at` (and while the tenant's current
 * mfaRememberDays since `created_at` has not passed). Only the token's SHA-256 is kept.
 */
export const rememberedDevices = pgTable(
  'remembered_devices',
  {
    tenantId: uuid('tenant_id').notNull(),
    tokenHash: text('token_hash').notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.tokenHash] }),
    index('remembered_devices_user').on(t.tenantId, t.userId),
    ownedByUser(t),
  ],
)

/** WebAuthn credentials (CONTRACT §9, passkeys). */
export const passkeys = pgTable(
  'passkeys',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    userId: uuid('user_id').notNull(),
    /** The credential id, base64url, as the authenticator gave it. */
    credentialId: text('credential_id').notNull(),
    /** COSE public key. */
    publicKey: bytea('public_key').notNull(),
    signCount: bigint('sign_count', { mode: 'number' }).notNull().default(0),
    transports: jsonb('transports').$type<string[]>().notNull().default([]),
    deviceType: text('device_type'),
    backedUp: boolean('backed_up').notNull().default(false),
    name: text('name').notNull(),
    createdAt: ts('created_at').notNull(),
    lastUsedAt: ts('last_used_at'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    uniqueIndex('passkeys_tenant_credential').on(t.tenantId, t.credentialId),
    index('passkeys_tenant_user').on(t.tenantId, t.userId),
    ownedByUser(t),
  ],
)

/**
 * WebAuthn challenges in flight: single-use, five minutes, bound to the tenant, the
 * ceremony ('registration' or 'authentication') and, for registration, the user.
 */
export const webauthnChallenges = pgTable(
  'webauthn_challenges',
  {
    tenantId: tenantRef(),
    /** SHA-256 of the challenge (base64url). */
    challengeHash: text('challenge_hash').notNull(),
    ceremony: text('ceremony').notNull(),
    userId: uuid('user_id'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    usedAt: ts('used_at'),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.challengeHash] })],
)

/**
 * OpenID Connect provider (CONTRACT §11): the applications a tenant signs people into, as
 * oidc-provider clients. The secret (web and machine apps) is sealed under ENCRYPTION_KEYS
 * and rotated by `npm run rotate-keys`; it is shown once, at creation or rotation.
 */
export const applications = pgTable(
  'applications',
  {
    ...tenantOwned(),
    /** The OAuth client_id: random, unique across tenants (an issuer finds it by it alone). */
    clientId: text('client_id').notNull().unique(),
    name: text('name').notNull(),
    /** web | spa | native | machine */
    type: text('type').notNull(),
    redirectUris: jsonb('redirect_uris').$type<string[]>().notNull().default([]),
    postLogoutRedirectUris: jsonb('post_logout_redirect_uris')
      .$type<string[]>()
      .notNull()
      .default([]),
    backchannelLogoutUri: text('backchannel_logout_uri'),
    firstParty: boolean('first_party').notNull().default(true),
    allowedScopes: jsonb('allowed_scopes').$type<string[]>().notNull().default([]),
    /** Registered through RFC 7591 dynamic registration (always third-party). */
    dynamic: boolean('dynamic').notNull().default(false),
    /** AES-256-GCM under ENCRYPTION_KEYS; null for public clients (spa, native). */
    clientSecretEnc: text('client_secret_enc'),
    /**
     * CONTRACT §22, client authentication: client_secret_basic | client_secret_post |
     * private_key_jwt | none; null is the type's default (a secret by HTTP Basic for web and
     * machine apps, none for spa and native).
     */
    tokenEndpointAuthMethod: text('token_endpoint_auth_method'),
    /** The client's public keys (a JWK Set) for private_key_jwt (RFC 7523), or jwks_uri. */
    jwks: jsonb('jwks').$type<{ keys: ({ kty: string } & Record<string, unknown>)[] }>(),
    jwksUri: text('jwks_uri'),
    /** RFC 9126: a plain authorization request is refused. */
    requirePar: boolean('require_par').notNull().default(false),
    /** RFC 9449 §5.2 dpop_bound_access_tokens: no bearer tokens. */
    requireDpop: boolean('require_dpop').notNull().default(false),
    /** RFC 8693 token exchange allowed (confidential applications only). */
    tokenExchange: boolean('token_exchange').notNull().default(false),
    /** null, or fapi2 (the FAPI 2.0 Security Profile). */
    profile: text('profile'),
    /**
     * CONTRACT §22, SAML IdP: a `saml` application's service provider (entity id, ACS
     * URLs, NameID format, attributes, certificates, signResponse); null for OIDC types.
     */
    saml: jsonb('saml').$type<SamlSettings>(),
    /** The SP's entity id, unique per tenant (an AuthnRequest's Issuer finds the app). */
    samlEntityId: text('saml_entity_id'),
    ...timestamps(),
  },
  (t) => [
    ...tenantListed('applications', t),
    uniqueIndex('applications_tenant_saml_entity').on(t.tenantId, t.samlEntityId),
  ],
)

/** A `saml` application's settings (modules/samlidp). */
export interface SamlSettings {
  entityId: string
  acsUrls: string[]
  nameIdFormat: 'emailAddress' | 'persistent' | 'unspecified'
  attributes: {
    name: string
    from: 'email' | 'givenName' | 'familyName' | 'displayName' | 'roles' | 'id'
  }[]
  spCertificates: string[]
  signResponse: boolean
  /**
   * The indexes the SP's metadata gives its HTTP-POST ACS (an AuthnRequest's
   * AssertionConsumerServiceIndex names one); none for an application made from fields,
   * or made from metadata before they were kept.
   */
  acsIndexes?: { index: number; url: string }[]
}

/** CONTRACT §11, API resources: RFC 8707 resource indicators and their scopes. */
export const apiResources = pgTable(
  'api_resources',
  {
    ...tenantOwned(),
    name: text('name').notNull(),
    /** The absolute URI clients send as `resource` and tokens carry as `aud`. */
    identifier: text('identifier').notNull(),
    scopes: jsonb('scopes')
      .$type<{ name: string; description: string | null; roles: string[] }[]>()
      .notNull()
      .default([]),
    accessTokenTtlSeconds: integer('access_token_ttl_seconds').notNull().default(900),
    ...timestamps(),
  },
  (t) => [
    ...tenantListed('api_resources', t),
    uniqueIndex('api_resources_tenant_identifier').on(t.tenantId, t.identifier),
  ],
)

/**
 * CONTRACT §17, custom roles (the built-ins Admin and Member are code:
 * modules/roles/permissions.ts). `name_normalized` is the name in lower case, unique in
 * the tenant; `permissions` are tenant permission names (tenant kind only).
 */
export const roles = pgTable(
  'roles',
  {
    ...tenantOwned(),
    name: text('name').notNull(),
    nameNormalized: text('name_normalized').notNull(),
    description: text('description'),
    /** tenant | organization (CONTRACT §18's template) */
    kind: text('kind').notNull().default('tenant'),
    permissions: jsonb('permissions').$type<string[]>().notNull().default([]),
    resourceScopes: jsonb('resource_scopes')
      .$type<{ resource: string; scopes: string[] }[]>()
      .notNull()
      .default([]),
    ...timestamps(),
  },
  (t) => [
    ...tenantListed('roles', t),
    uniqueIndex('roles_tenant_name').on(t.tenantId, t.nameNormalized),
  ],
)

/** The custom roles a user holds directly (PUT users/{id}/roles); goes with the user and the role. */
export const userRoles = pgTable(
  'user_roles',
  {
    tenantId: tenantRef(),
    userId: uuid('user_id').notNull(),
    roleId: uuid('role_id').notNull(),
    /**
     * direct (PUT users/{id}/roles, invitations, import) | sso (an SSO connection's
     * roleMapping, replaced at each SSO sign-in; CONTRACT §17). Assigning a role directly
     * that the mapping gave makes it direct.
     */
    source: text('source').notNull().default('direct'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.userId, t.roleId] }),
    ownedByUser(t),
    foreignKey({
      columns: [t.tenantId, t.roleId],
      foreignColumns: [roles.tenantId, roles.id],
    }).onDelete('cascade'),
    index('user_roles_tenant_role').on(t.tenantId, t.roleId),
  ],
)

/**
 * CONTRACT §17 groups (SCIM 2.0 Groups, RFC 7643 §4.2). `display_name_normalized` is the
 * name in lower case, unique in the tenant (displayName is not case-exact in RFC 7643).
 */
export const groups = pgTable(
  'groups',
  {
    ...tenantOwned(),
    displayName: text('display_name').notNull(),
    displayNameNormalized: text('display_name_normalized').notNull(),
    externalId: text('external_id'),
    ...timestamps(),
  },
  (t) => [
    ...tenantListed('groups', t),
    uniqueIndex('groups_tenant_display_name').on(t.tenantId, t.displayNameNormalized),
    index('groups_tenant_external_id').on(t.tenantId, t.externalId),
  ],
)

/** A group's members: each goes with its group and with its user. */
export const groupMembers = pgTable(
  'group_members',
  {
    tenantId: tenantRef(),
    groupId: uuid('group_id').notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.groupId, t.userId] }),
    foreignKey({
      columns: [t.tenantId, t.groupId],
      foreignColumns: [groups.tenantId, groups.id],
    }).onDelete('cascade'),
    ownedByUser(t),
    index('group_members_tenant_user').on(t.tenantId, t.userId),
  ],
)

/** The custom roles every member of a group holds; goes with the group and with the role. */
export const groupRoles = pgTable(
  'group_roles',
  {
    tenantId: tenantRef(),
    groupId: uuid('group_id').notNull(),
    roleId: uuid('role_id').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.groupId, t.roleId] }),
    foreignKey({
      columns: [t.tenantId, t.groupId],
      foreignColumns: [groups.tenantId, groups.id],
    }).onDelete('cascade'),
    foreignKey({
      columns: [t.tenantId, t.roleId],
      foreignColumns: [roles.tenantId, roles.id],
    }).onDelete('cascade'),
    index('group_roles_tenant_role').on(t.tenantId, t.roleId),
  ],
)

/**
 * CONTRACT §18 organizations inside a tenant: a person has one account in the tenant and
 * membership in many organizations. `jit_role_ids` are the organization roles (§17, kind
 * organization) a JIT member gets, by id so a rename follows (a deleted role's id is dropped
 * when read).
 */
export const organizations = pgTable(
  'organizations',
  {
    ...tenantOwned(),
    name: text('name').notNull(),
    description: text('description'),
    mfaRequired: boolean('mfa_required').notNull().default(false),
    jitRoleIds: jsonb('jit_role_ids').$type<string[]>().notNull().default([]),
    ...timestamps(),
  },
  (t) => [...tenantListed('organizations', t)],
)

/**
 * The email domains an organization claims for JIT membership (lowercase, IDNs in
 * punycode), keyed by (tenant, domain): a domain belongs to at most one organization of the
 * tenant by the primary key itself (409 domain_taken).
 */
export const organizationDomains = pgTable(
  'organization_domains',
  {
    tenantId: tenantRef(),
    domain: text('domain').notNull(),
    organizationId: uuid('organization_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.domain] }),
    foreignKey({
      columns: [t.tenantId, t.organizationId],
      foreignColumns: [organizations.tenantId, organizations.id],
    }).onDelete('cascade'),
    index('organization_domains_organization').on(t.tenantId, t.organizationId),
  ],
)

/** A user's membership in an organization: goes with the organization and with the user. */
export const organizationMembers = pgTable(
  'organization_members',
  {
    tenantId: tenantRef(),
    organizationId: uuid('organization_id').notNull(),
    userId: uuid('user_id').notNull(),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.organizationId, t.userId] }),
    foreignKey({
      columns: [t.tenantId, t.organizationId],
      foreignColumns: [organizations.tenantId, organizations.id],
    }).onDelete('cascade'),
    ownedByUser(t),
    // me/organizations: a user's memberships by one index range, however many there are.
    index('organization_members_tenant_user').on(t.tenantId, t.userId),
    // The members page, oldest first.
    index('organization_members_joined').on(t.tenantId, t.organizationId, t.createdAt, t.userId),
  ],
)

/** The organization roles a member holds in that organization; go with the membership and the role. */
export const organizationMemberRoles = pgTable(
  'organization_member_roles',
  {
    tenantId: tenantRef(),
    organizationId: uuid('organization_id').notNull(),
    userId: uuid('user_id').notNull(),
    roleId: uuid('role_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.organizationId, t.userId, t.roleId] }),
    foreignKey({
      columns: [t.tenantId, t.organizationId, t.userId],
      foreignColumns: [
        organizationMembers.tenantId,
        organizationMembers.organizationId,
        organizationMembers.userId,
      ],
    }).onDelete('cascade'),
    foreignKey({
      columns: [t.tenantId, t.roleId],
      foreignColumns: [roles.tenantId, roles.id],
    }).onDelete('cascade'),
    index('organization_member_roles_role').on(t.tenantId, t.roleId),
  ],
)

/**
 * Invitations to an organization (CONTRACT §18). One pending invitation per (organization,
 * address): the partial unique index holds it, and a second invitation revokes the first in
 * its own transaction. `role_ids` are organization roles, given when accepted.
 */
export const organizationInvitations = pgTable(
  'organization_invitations',
  {
    ...tenantOwned(),
    organizationId: uuid('organization_id').notNull(),
    email: text('email').notNull(),
    emailNormalized: text('email_normalized').notNull(),
    roleIds: jsonb('role_ids').$type<string[]>().notNull().default([]),
    /** SHA-256 of the token; the token names no tenant, so this is unique globally. */
    tokenHash: text('token_hash').notNull().unique(),
    invitedBy: text('invited_by'),
    createdAt: ts('created_at').notNull(),
    expiresAt: ts('expires_at').notNull(),
    acceptedAt: ts('accepted_at'),
    acceptedUserId: uuid('accepted_user_id'),
    revokedAt: ts('revoked_at'),
  },
  (t) => [
    ...tenantListed('organization_invitations', t),
    foreignKey({
      columns: [t.tenantId, t.organizationId],
      foreignColumns: [organizations.tenantId, organizations.id],
    }).onDelete('cascade'),
    uniqueIndex('organization_invitations_pending')
      .on(t.tenantId, t.organizationId, t.emailNormalized)
      .where(sql`accepted_at IS NULL AND revoked_at IS NULL`),
  ],
)

/**
 * Every model of oidc-provider (sessions, grants, codes, opaque tokens, interactions,
 * device codes, registered clients…) as one row (logto's oidc_model_instances): the
 * adapter's payload as jsonb, with the columns its lookups need beside it. Keys are led by
 * tenant_id, so any instance serves any step of a flow and no tenant reads another's rows.
 * account_id and client_id are copied out of the payload so that a user's grants can be
 * erased and an application's tokens revoked with an index.
 */
export const oidcModels = pgTable(
  'oidc_models',
  {
    tenantId: tenantRef(),
    model: text('model').notNull(),
    id: text('id').notNull(),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    grantId: text('grant_id'),
    userCode: text('user_code'),
    uid: text('uid'),
    accountId: text('account_id'),
    clientId: text('client_id'),
    expiresAt: ts('expires_at'),
    consumedAt: ts('consumed_at'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.model, t.id] }),
    index('oidc_models_grant').on(t.tenantId, t.grantId).where(sql`grant_id IS NOT NULL`),
    index('oidc_models_user_code').on(t.tenantId, t.userCode).where(sql`user_code IS NOT NULL`),
    index('oidc_models_uid').on(t.tenantId, t.uid).where(sql`uid IS NOT NULL`),
    index('oidc_models_account').on(t.tenantId, t.accountId).where(sql`account_id IS NOT NULL`),
    index('oidc_models_client').on(t.tenantId, t.clientId).where(sql`client_id IS NOT NULL`),
  ],
)

/**
 * Webhook endpoints (CONTRACT §13). The signing secret is sealed under ENCRYPTION_KEYS
 * (rotated by `npm run rotate-keys`); after a rotation the previous one keeps signing beside
 * it until previous_until, so receivers can switch without dropping a delivery.
 * failing_since is the start of the current run of failures (null once one succeeds): an
 * endpoint failing for 5 days is disabled.
 */
export const webhooks = pgTable(
  'webhooks',
  {
    ...tenantOwned(),
    url: text('url').notNull(),
    /** Audit action names, or ['*'] for every event. */
    events: text('events').array().notNull(),
    description: text('description'),
    enabled: boolean('enabled').notNull().default(true),
    secretEnc: text('secret_enc').notNull(),
    previousSecretEnc: text('previous_secret_enc'),
    previousUntil: ts('previous_until'),
    failingSince: ts('failing_since'),
    ...timestamps(),
  },
  (t) => [...tenantListed('webhooks', t)],
)

/**
 * Blocking hooks (CONTRACT §21): at most one per event and tenant, called and waited for
 * during a sign-up, a sign-in or the minting of an access token. The Standard Webhooks
 * secret is sealed under ENCRYPTION_KEYS like a webhook's.
 */
export const hooks = pgTable(
  'hooks',
  {
    ...tenantOwned(),
    /** before_sign_up | before_sign_in | custom_access_token */
    event: text('event').notNull(),
    url: text('url').notNull(),
    enabled: boolean('enabled').notNull().default(true),
    timeoutMs: integer('timeout_ms').notNull(),
    /** allow | deny: what a timeout, a non-2xx or an unreadable answer means. */
    onFailure: text('on_failure').notNull(),
    secretEnc: text('secret_enc').notNull(),
    ...timestamps(),
  },
  (t) => [...tenantListed('hooks', t), uniqueIndex('hooks_tenant_event').on(t.tenantId, t.event)],
)

/**
 * The last calls of each hook, real and test (CONTRACT §21, issue 32), for the console:
 * when, the outcome, how long, the HTTP status and a fixed-words reason of a failure. Never
 * a body, a claim, a deny's message or who signed in. Bounded: each write keeps a hook's
 * newest HOOK_CALLS_KEPT (hooks/queries.ts) and deletes the rest; a hook's go with it.
 */
export const hookCallLog = pgTable(
  'hook_calls',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    hookId: uuid('hook_id').notNull(),
    at: ts('at').notNull(),
    /** allow | deny | timeout | error */
    outcome: text('outcome').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** The receiver's HTTP status; null when none came (a timeout, a refused address). */
    status: integer('status'),
    /** Made by POST hooks/{id}/test. */
    test: boolean('test').notNull(),
    error: text('error'),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    foreignKey({
      columns: [t.tenantId, t.hookId],
      foreignColumns: [hooks.tenantId, hooks.id],
    }).onDelete('cascade'),
    index('hook_calls_hook_at').on(t.tenantId, t.hookId, t.at, t.id),
  ],
)

/**
 * The outbox of webhook deliveries: one row per event and subscribed endpoint, written in
 * the transaction that writes the audit event, so an event is sent exactly when it
 * committed. Any instance claims due rows (next_attempt_at, moved ahead as a lease while
 * an attempt runs) with FOR UPDATE SKIP LOCKED.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    tenantId: uuid('tenant_id').notNull(),
    id: uuid('id').notNull(),
    webhookId: uuid('webhook_id').notNull(),
    /** The audit event's id (a test event's own id). */
    eventId: uuid('event_id').notNull(),
    eventType: text('event_type').notNull(),
    /** The body sent, `{type, timestamp, data: {tenantId, event}}`. */
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** Pending | Succeeded | Failed */
    status: text('status').notNull().default('Pending'),
    attempts: integer('attempts').notNull().default(0),
    lastResponseStatus: integer('last_response_status'),
    lastError: text('last_error'),
    nextAttemptAt: ts('next_attempt_at'),
    createdAt: ts('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    foreignKey({
      columns: [t.tenantId, t.webhookId],
      foreignColumns: [webhooks.tenantId, webhooks.id],
    }).onDelete('cascade'),
    index('webhook_deliveries_webhook_created').on(t.tenantId, t.webhookId, t.createdAt, t.id),
    // The worker's queue: only pending rows, across tenants, by due time.
    index('webhook_deliveries_due').on(t.nextAttemptAt).where(sql`status = 'Pending'`),
  ],
)

/**
 * Enterprise SSO connections (CONTRACT §12): OIDC or SAML 2.0 identity providers of one
 * tenant, each owning email domains. The OIDC client secret is sealed (rotated by
 * rotate-keys); `domains` is the connection's own list as answered, and sso_domains holds
 * the same names once more, keyed by (tenant, domain), so a domain belongs to at most one
 * connection of the tenant by the primary key itself.
 */
export const ssoConnections = pgTable(
  'sso_connections',
  {
    ...tenantOwned(),
    name: text('name').notNull(),
    /** oidc | saml */
    type: text('type').notNull(),
    domains: text('domains').array().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    jitProvisioning: boolean('jit_provisioning').notNull().default(true),
    defaultRole: text('default_role').notNull().default(MEMBER_ROLE),
    enforce: boolean('enforce').notNull().default(false),
    mfaSatisfied: boolean('mfa_satisfied').notNull().default(false),
    oidcIssuer: text('oidc_issuer'),
    oidcClientId: text('oidc_client_id'),
    oidcScopes: text('oidc_scopes').array(),
    oidcClientSecretEnc: text('oidc_client_secret_enc'),
    samlIdpEntityId: text('saml_idp_entity_id'),
    samlIdpSsoUrl: text('saml_idp_sso_url'),
    samlIdpCertificates: text('saml_idp_certificates').array(),
    /**
     * CONTRACT §17 roleMapping: [{claim, value, roleIds}] (role ids, so a rename follows;
     * a deleted role's id is dropped when the connection is read and at sign-in).
     */
    roleMapping: jsonb('role_mapping')
      .$type<{ claim: string; value: string; roleIds: string[] }[]>()
      .notNull()
      .default([]),
    /**
     * CONTRACT §18: an SSO sign-in through the connection makes the user a member of this
     * organization. Deleting the organization sets it to null and nothing else (migration
     * 0030 spells the action `SET NULL (organization_id)`: a plain SET NULL would null the
     * tenant_id of this composite key too); the connection goes on signing people in.
     */
    organizationId: uuid('organization_id'),
    ...timestamps(),
  },
  (t) => [
    ...tenantListed('sso_connections', t),
    foreignKey({
      columns: [t.tenantId, t.organizationId],
      foreignColumns: [organizations.tenantId, organizations.id],
    }).onDelete('set null'),
  ],
)

/** Which connection of the tenant owns a domain (lowercase, IDNs in punycode). */
export const ssoDomains = pgTable(
  'sso_domains',
  {
    tenantId: uuid('tenant_id').notNull(),
    domain: text('domain').notNull(),
    connectionId: uuid('connection_id').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.domain] }),
    foreignKey({
      columns: [t.tenantId, t.connectionId],
      foreignColumns: [ssoConnections.tenantId, ssoConnections.id],
    }).onDelete('cascade'),
    index('sso_domains_connection').on(t.tenantId, t.connectionId),
  ],
)

/**
 * Social sign-in connections (CONTRACT §19): one provider of a tenant's (a preset such as
 * google or github, or a generic oidc or oauth2 one), many per tenant, shown as buttons in
 * `sort_order`. The client secret is sealed (rotate-keys re-seals it); identities through a
 * connection are rows of `identities` with kind `social`.
 */
export const socialConnections = pgTable(
  'social_connections',
  {
    ...tenantOwned(),
    provider: text('provider').notNull(),
    name: text('name').notNull(),
    clientId: text('client_id').notNull(),
    clientSecretEnc: text('client_secret_enc'),
    scopes: text('scopes').array(),
    enabled: boolean('enabled').notNull().default(true),
    allowSignUp: boolean('allow_sign_up').notNull().default(true),
    linkByVerifiedEmail: boolean('link_by_verified_email').notNull().default(true),
    sortOrder: integer('sort_order').notNull().default(0),
    /** oidc: the issuer; microsoft: a directory id, `common` or `organizations`. */
    issuer: text('issuer'),
    /** oauth2 (and GitHub Enterprise, GitLab self-managed): the provider's endpoints. */
    endpoints: jsonb('endpoints').$type<{
      authorizationUrl?: string
      tokenUrl?: string
      userinfoUrl?: string
      apiUrl?: string
    }>(),
    /** oauth2: dot-separated paths into the profile. */
    claims: jsonb('claims').$type<{
      id?: string
      email?: string
      emailVerified?: string
      name?: string
    }>(),
    /** apple: the developer account's Team ID, the client secret JWT's `iss`. */
    appleTeamId: text('apple_team_id'),
    /** apple: the signing key's Key ID, the client secret JWT's `kid`. */
    appleKeyId: text('apple_key_id'),
    /** apple: the P-256 signing key (PEM PKCS#8), sealed like the client secret. */
    applePrivateKeyEnc: text('apple_private_key_enc'),
    ...timestamps(),
  },
  (t) => [...tenantListed('social_connections', t)],
)

/**
 * SAML assertion ids accepted (CONTRACT §12: an assertion ID accepted once), kept until the
 * assertion could no longer be accepted anyway; inserted ON CONFLICT DO NOTHING, so of two
 * posts of one assertion only one gets a row back.
 */
export const ssoSamlAssertions = pgTable(
  'sso_saml_assertions',
  {
    tenantId: uuid('tenant_id').notNull(),
    connectionId: uuid('connection_id').notNull(),
    assertionId: text('assertion_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.connectionId, t.assertionId] }),
    foreignKey({
      columns: [t.tenantId, t.connectionId],
      foreignColumns: [ssoConnections.tenantId, ssoConnections.id],
    }).onDelete('cascade'),
  ],
)

/**
 * A tenant's own wording of a mail (CONTRACT §20, Mail templates): one row per kind and
 * locale, replacing the catalogue's default for that mail in that language. `html` is
 * stored sanitized (null: drawn from `text`). Read once per mail sent, by the key.
 */
export const emailTemplates = pgTable(
  'email_templates',
  {
    tenantId: tenantRef(),
    /** login_code | email_otp | email_verification | password_reset | invitation | … */
    kind: text('kind').notNull(),
    locale: text('locale').notNull(),
    subject: text('subject').notNull(),
    text: text('text').notNull(),
    html: text('html'),
    ...timestamps(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.kind, t.locale] })],
)
