// Second factor: an MFA recovery code (CONTRACT §9), accepted wherever a TOTP code is, for
// a user with TOTP. Ten per user, `xxxxx-xxxxx` lowercase base32, compared
// case-insensitively with the hyphen and spaces optional; one use each, spent atomically
// in the session's transaction; audited as MfaRecoveryCodeUsed with `metadata.remaining`.
//
// FOUNDATION STUB: refuses every code until the recovery-code library lands.
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { User } from '../users/queries.ts'
import type { SecondFactorProof } from './pipeline.ts'

export function checkRecoveryCode(
  _deps: Pick<Deps, 'db' | 'clock' | 'config'>,
  _user: User,
  _code: string,
): Promise<SecondFactorProof> {
  fail('invalid_mfa_code')
}
