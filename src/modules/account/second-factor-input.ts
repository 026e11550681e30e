// CONTRACT §9: a recovery code is accepted instead of a TOTP code; giving both is a
// malformed request (400 validation), refused before the mailed code is looked at, so it
// is neither spent nor counted.
import { fail } from '../../lib/errors.ts'

export function oneSecondFactor(input: { totpCode?: string; recoveryCode?: string }): void {
  if (input.totpCode !== undefined && input.recoveryCode !== undefined) {
    fail('validation', {
      message: 'Give either totpCode or recoveryCode, not both.',
      details: { issues: [{ path: 'body.recoveryCode', message: 'not with totpCode' }] },
    })
  }
}
