// Rows become responses only through these functions (never a row as a response).
import type { Config } from '../../config.ts'
import type { ShownUser } from './queries.ts'

export interface PublicUser {
  id: string
  tenantId: string
  email: string
  status: string
  role: string
  createdAt: string
  lastLoginAt: string | null
  totpEnrolled: boolean
  emailVerified: boolean
}

export function presentUser(user: ShownUser): PublicUser {
  return {
    id: user.id,
    tenantId: user.tenantId,
    email: user.email,
    status: user.status,
    role: user.role,
    createdAt: isoTime(user.createdAt),
    lastLoginAt: user.lastLoginAt ? isoTime(user.lastLoginAt) : null,
    totpEnrolled: user.totpEnabled,
    emailVerified: user.emailVerified,
  }
}

/** A time as the API writes it; the raw statements answer it already written. */
function isoTime(time: Date | string): string {
  return typeof time === 'string' ? time : time.toISOString()
}

/** The logo's address; "" when there is none (SPEC types logoUrl as a required string). */
export function logoUrl(config: Config, slug: string, hasLogo: boolean): string {
  return hasLogo ? `${config.publicUrl}/v1/${slug}/logo` : ''
}
