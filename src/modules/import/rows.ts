// One import row's field rules (CONTRACT §14), checked in code rather than by the body's
// schema: a row that breaks them is that row's `error` result, and the batch goes on.
// The rules are those of the same fields elsewhere (users, §4 and §8).
import { supportedLocales } from '../../i18n/index.ts'
import { isEmail } from '../../lib/email.ts'
import { isInstant } from '../../plugins/validation.ts'
import { type BaseRole, isBaseRole } from '../roles/permissions.ts'
import type { ImportUser } from './schemas.ts'

/** A row that passed checkRow: its role and status are the service's own values. */
export type CheckedUser = Omit<ImportUser, 'role' | 'status'> & {
  role?: BaseRole
  status?: 'Active' | 'Suspended'
}

const LENGTHS = {
  passwordHash: 1024,
  passwordSalt: 1024,
  displayName: 200,
  givenName: 200,
  familyName: 200,
  externalId: 256,
} as const

/** 1 to max characters, counted in code points as JSON Schema's maxLength counts them. */
function fits(value: string, max: number): boolean {
  if (value.length === 0 || value.length > 2 * max) return false
  let codePoints = 0
  for (const _ of value) if (++codePoints > max) return false
  return true
}

export function checkRow(
  user: ImportUser,
): { user: CheckedUser } | { reason: 'invalid_email' | 'validation' } {
  if (!isEmail(user.email)) return { reason: 'invalid_email' }
  for (const [field, max] of Object.entries(LENGTHS)) {
    const value = user[field as keyof typeof LENGTHS]
    if (value !== undefined && !fits(value, max)) return { reason: 'validation' }
  }
  if (user.role !== undefined && !isBaseRole(user.role)) {
    return { reason: 'validation' }
  }
  if (user.status !== undefined && user.status !== 'Active' && user.status !== 'Suspended') {
    return { reason: 'validation' }
  }
  if (user.createdAt !== undefined && !isInstant(user.createdAt)) return { reason: 'validation' }
  // CONTRACT §20: a locale the service has a catalogue for, as PATCH me takes it.
  if (user.locale !== undefined && !supportedLocales.includes(user.locale)) {
    return { reason: 'validation' }
  }
  return { user: user as CheckedUser }
}
