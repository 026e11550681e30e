// What other modules read and change of the passkeys and their challenges (issue 36,
// Structure): a sign-in's lookup of the credential, its use stamp and the spent challenge
// (signin/passkey.ts), a user's passkeys for a step-up (stepup), and an erasure's delete of
// the user's challenges (privacy). They are passkeys/queries.ts's own, re-exported: the
// same statements, on the handle (a transaction too) the caller passes. No file outside
// passkeys/ imports queries.ts (test/layout.test.ts checks).
export {
  deleteChallengesOf,
  findPasskeyByCredentialId,
  listPasskeys,
  type PasskeyRow,
  recordPasskeyUse,
  spendChallenge,
} from './queries.ts'
