// The body and answer of POST users/import (CONTRACT §14).
import { type Static, Type } from 'typebox'
import { supportedLocales } from '../../i18n/index.ts'
import { ref } from '../../schemas.ts'

/** At most this many users a request; more is 400 `validation`, and nothing is created. */
export const IMPORT_MAX_USERS = 1000

/** This route's body limit: 1,000 users with long hashes and profiles (2 MiB). */
export const IMPORT_BODY_LIMIT = 2 * 1024 * 1024

// A row's fields have their JSON types checked with the request (a number where a string is
// due is 400), and everything else about them by checkRow (rows.ts), so that one bad row is
// that row's `error` result and the rest of the batch goes in (CONTRACT §14: per-row results).
const Text = (rule: string) => Type.Optional(Type.String({ description: rule }))

const ImportUser = Type.Object(
  {
    email: Type.String({
      description:
        'An email address under the rules of the `email` fields elsewhere (one `@`, a domain with a dot inside, at most 254 characters, no white space inside or control characters). Stored as signup stores it: NFC and trimmed, compared case-insensitively. Otherwise the row is `error` with `invalid_email`.',
    }),
    emailVerified: Type.Optional(Type.Boolean({ description: 'Default false.' })),
    passwordHash: Text(
      '1 to 1024 characters: argon2id or argon2i (PHC), bcrypt ($2a$, $2b$, $2y$), passlib scrypt ($scrypt$ln=…,r=…,p=…$salt$hash), PBKDF2-SHA256 as Django (pbkdf2_sha256$…), passlib ($pbkdf2-sha256$rounds$…) or PHC ($pbkdf2-sha256$i=…$…) write it, or Firebase scrypt (`<base64 hash>$<base64 salt>`, or the salt in `passwordSalt`, with `hashConfig.firebase`). Without it the user has no password (passwordless, SSO, or a reset).',
    ),
    passwordSalt: Text('1 to 1024 characters.'),
    role: Text('`Member` (the default) or `Admin`.'),
    status: Text('`Active` (the default) or `Suspended`.'),
    roles: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 50,
        description:
          'Custom tenant roles (CONTRACT §17, any case) given to the user created or updated, added to those it holds (audit UserRolesChanged, via `import`). A name that is no tenant role makes the row `error` with `validation`.',
      }),
    ),
    createdAt: Text('An RFC 3339 date-time from 1970 to 9999; default now.'),
    displayName: Text('1 to 200 characters.'),
    givenName: Text('1 to 200 characters.'),
    familyName: Text('1 to 200 characters.'),
    externalId: Text('1 to 256 characters.'),
    locale: Text(
      `The user’s language (CONTRACT §20), a supported locale as its catalogue names it: ${supportedLocales.join(', ')}.`,
    ),
  },
  {
    additionalProperties: false,
    description:
      'A user. A field outside its rule (described on each) makes the row `error` with `invalid_email` for `email`, `validation` for any other, and nothing of that row is stored.',
  },
)
export type ImportUser = Static<typeof ImportUser>

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
          '`duplicate_in_batch`, `exists` (skipped); `invalid_email`, `validation`, `unsupported_hash`, `hash_too_expensive`, `api_key_not_allowed`, `permission_required` (role `Admin` from a user who is no Admin), `credential_protected` (error: an update may not replace the password of an Admin or of a user with a second factor).',
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
