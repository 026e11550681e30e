// The body and answer of POST users/import (CONTRACT §14).
import { type Static, Type } from 'typebox'
import { DateTime, Email, Role, ref } from '../../schemas.ts'

/** At most this many users a request; more is 400 `validation`, and nothing is created. */
export const IMPORT_MAX_USERS = 1000

/** This route's body limit: 1,000 users with long hashes and profiles (2 MiB). */
export const IMPORT_BODY_LIMIT = 2 * 1024 * 1024

const Text = (maxLength: number) => Type.Optional(Type.String({ minLength: 1, maxLength }))

const ImportUser = Type.Object(
  {
    email: Email,
    emailVerified: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    passwordHash: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'argon2id or argon2i (PHC), bcrypt ($2a$, $2b$, $2y$), passlib scrypt ($scrypt$ln=…,r=…,p=…$salt$hash), PBKDF2-SHA256 as Django (pbkdf2_sha256$…), passlib ($pbkdf2-sha256$rounds$…) or PHC ($pbkdf2-sha256$i=…$…) write it, or Firebase scrypt (`<base64 hash>$<base64 salt>`, or the salt in `passwordSalt`, with `hashConfig.firebase`). Without it the user has no password (passwordless, SSO, or a reset).',
      }),
    ),
    passwordSalt: Text(1024),
    role: Type.Optional(Role),
    status: Type.Optional(Type.Union([Type.Literal('Active'), Type.Literal('Suspended')])),
    createdAt: Type.Optional(DateTime),
    displayName: Text(200),
    givenName: Text(200),
    familyName: Text(200),
    externalId: Text(256),
  },
  { additionalProperties: false },
)

const FirebaseHashConfig = Type.Object(
  {
    signerKey: Type.String({ minLength: 1, maxLength: 1024, description: 'base64_signer_key' }),
    saltSeparator: Type.String({ maxLength: 1024, description: 'base64_salt_separator' }),
    rounds: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
    memCost: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'mem_cost' }),
  },
  { additionalProperties: false },
)

export const ImportBody = Type.Object(
  {
    users: Type.Array(ImportUser, { minItems: 1, maxItems: IMPORT_MAX_USERS }),
    hashConfig: Type.Optional(
      Type.Object({ firebase: Type.Optional(FirebaseHashConfig) }, { additionalProperties: false }),
    ),
    onConflict: Type.Optional(Type.Union([Type.Literal('skip'), Type.Literal('update')])),
  },
  {
    additionalProperties: false,
    examples: [
      {
        users: [
          {
            email: 'ada@example.com',
            emailVerified: true,
            passwordHash: '$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy',
            displayName: 'Ada Lovelace',
          },
        ],
        onConflict: 'skip',
      },
    ],
  },
)
export type ImportBody = Static<typeof ImportBody>

const ImportResultComponent = Type.Object(
  {
    index: Type.Integer({ description: 'The position of the user in `users`.' }),
    status: Type.Union([
      Type.Literal('created'),
      Type.Literal('updated'),
      Type.Literal('skipped'),
      Type.Literal('error'),
    ]),
    id: Type.Optional(Type.String()),
    reason: Type.Optional(
      Type.String({
        description:
          '`duplicate_in_batch`, `exists` (skipped); `unsupported_hash`, `hash_too_expensive`, `api_key_not_allowed` (error).',
      }),
    ),
  },
  { $id: 'ImportResult' },
)
export type ImportResult = Static<typeof ImportResultComponent>

const ImportAnswerComponent = Type.Object(
  { results: Type.Array(ref(ImportResultComponent)) },
  { $id: 'ImportAnswer' },
)
export const ImportAnswer = ref(ImportAnswerComponent)

/** The components of this module, registered by src/plugins/openapi.ts. */
export const importComponents = [ImportResultComponent, ImportAnswerComponent]
