// The SCIM User resource (RFC 7643 §4.1) of a user of the tenant, and the reverse: a
// resource a client sent (POST, PUT, or the result of a PATCH) read into the user fields it
// sets. The mapping (CONTRACT §14): id = the user's id; userName = the email, which is also
// the one `emails` value (type work, primary); name.givenName/familyName, displayName and
// externalId = the profile fields; active = not Suspended. Attribute names are read
// case-insensitively (RFC 7643 §2.1); attributes the service does not keep are ignored,
// and the read-only ones (id, meta, groups) too (RFC 7644 §3.5.1).
import { createHash } from 'node:crypto'
import { isEmail } from '../../lib/email.ts'
import { NewPassword } from '../../schemas.ts'
import type { User } from '../users/reads.ts'
import { invalidValue } from './errors.ts'

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

export interface ScimEmail {
  value: string
  type: string
  primary: boolean
}

export interface ScimUser {
  schemas: string[]
  id: string
  externalId?: string
  userName: string
  name?: { givenName?: string; familyName?: string }
  displayName?: string
  emails: ScimEmail[]
  active: boolean
  meta: {
    resourceType: 'User'
    created: string
    lastModified: string
    location: string
    version: string
  }
}

/** The user as a SCIM resource; `base` is `{PUBLIC_URL}/scim/v2/{slug}`. */
export function toScimUser(user: User, base: string): ScimUser {
  const name: ScimUser['name'] = {}
  if (user.givenName !== null) name.givenName = user.givenName
  if (user.familyName !== null) name.familyName = user.familyName
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.externalId !== null ? { externalId: user.externalId } : {}),
    userName: user.email,
    ...(Object.keys(name).length > 0 ? { name } : {}),
    ...(user.displayName !== null ? { displayName: user.displayName } : {}),
    emails: [{ value: user.email, type: 'work', primary: true }],
    active: user.status !== 'Suspended',
    meta: {
      resourceType: 'User',
      created: user.createdAt.toISOString(),
      lastModified: user.updatedAt.toISOString(),
      location: `${base}/Users/${user.id}`,
      version: versionOf(user),
    },
  }
}

/**
 * The weak entity tag of the resource (RFC 7644 §3.14): a digest of everything the
 * resource shows, so any change of it changes the tag, even within one clock tick.
 */
export function versionOf(user: User): string {
  const shown = [
    user.id,
    user.email,
    user.externalId,
    user.givenName,
    user.familyName,
    user.displayName,
    user.status !== 'Suspended',
    user.createdAt.toISOString(),
    user.updatedAt.toISOString(),
  ]
  const digest = createHash('sha256').update(JSON.stringify(shown)).digest('base64url')
  return `W/"${digest.slice(0, 22)}"`
}

/** What a resource sent by a client sets. Absent profile fields are cleared (a PUT replaces). */
export interface UserInput {
  email: string
  displayName: string | null
  givenName: string | null
  familyName: string | null
  externalId: string | null
  /** Absent: the status stays. */
  active?: boolean
  /** Absent: the password stays. */
  password?: string
}

/** The value of `name` in `object`, its key matched case-insensitively (RFC 7643 §2.1). */
export function attribute(object: Record<string, unknown>, name: string): unknown {
  const wanted = name.toLowerCase()
  for (const key of Object.keys(object)) if (key.toLowerCase() === wanted) return object[key]
  return undefined
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Reads a User resource sent by a client; 400 invalidValue when it cannot be one. */
export function readUser(body: unknown): UserInput {
  if (!isObject(body)) throw invalidValue('The request body must be a User resource.')
  const userName = attribute(body, 'userName')
  if (typeof userName !== 'string' || userName.trim() === '') {
    throw invalidValue('userName is required and must be a string.')
  }
  // CONTRACT §14: userName is the email; when it is not an address, the primary email is.
  const primary = primaryEmail(attribute(body, 'emails'))
  const email = isEmail(userName) ? userName : primary
  if (email === undefined || !isEmail(email)) {
    throw invalidValue('userName, or else the primary emails value, must be an email address.')
  }
  const name = attribute(body, 'name')
  if (name !== undefined && name !== null && !isObject(name)) {
    throw invalidValue('name must be a complex attribute.')
  }
  const names = isObject(name) ? name : {}
  const input: UserInput = {
    email,
    displayName: text(attribute(body, 'displayName'), 'displayName', 200),
    givenName: text(attribute(names, 'givenName'), 'name.givenName', 200),
    familyName: text(attribute(names, 'familyName'), 'name.familyName', 200),
    externalId: text(attribute(body, 'externalId'), 'externalId', 256),
  }
  const active = attribute(body, 'active')
  if (active !== undefined && active !== null) input.active = readBoolean(active, 'active')
  const password = attribute(body, 'password')
  if (password !== undefined && password !== null) input.password = readPassword(password)
  return input
}

/**
 * A boolean, or the strings "True" and "False" in any case: Microsoft Entra ID sends
 * `active` as a string in its PATCH requests.
 */
export function readBoolean(value: unknown, name: string): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') {
    const lower = value.toLowerCase()
    if (lower === 'true') return true
    if (lower === 'false') return false
  }
  throw invalidValue(`${name} must be a boolean.`)
}

function readPassword(value: unknown): string {
  // The bounds every new password of the API has (src/schemas.ts NewPassword).
  const { minLength, maxLength } = NewPassword as unknown as {
    minLength: number
    maxLength: number
  }
  if (typeof value !== 'string' || value.length < minLength || value.length > maxLength) {
    throw invalidValue(`password must be a string of ${minLength} to ${maxLength} characters.`)
  }
  return value
}

/** A profile text: null when absent, null or empty; else 1..max characters. */
function text(value: unknown, name: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value !== 'string') throw invalidValue(`${name} must be a string.`)
  if ([...value].length > max) throw invalidValue(`${name} must be at most ${max} characters.`)
  return value
}

/** The primary email's value: the one marked primary, else the work one, else the first. */
export function primaryEmail(emails: unknown): string | undefined {
  if (emails === undefined || emails === null) return undefined
  if (!Array.isArray(emails) || !emails.every(isObject)) {
    throw invalidValue('emails must be a list of objects.')
  }
  const isPrimary = (e: Record<string, unknown>) => {
    const primary = attribute(e, 'primary')
    return primary !== undefined && primary !== null && readBoolean(primary, 'emails.primary')
  }
  const chosen =
    emails.find(isPrimary) ??
    emails.find((e) => String(attribute(e, 'type')).toLowerCase() === 'work') ??
    emails[0]
  const value = chosen ? attribute(chosen, 'value') : undefined
  if (value !== undefined && typeof value !== 'string') {
    throw invalidValue('emails.value must be a string.')
  }
  return value
}
