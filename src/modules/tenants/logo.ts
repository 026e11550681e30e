// The tenant logo (SPEC, Administration; CONTRACT §2, Logo): base64 in, at most 512 KiB
// decoded, checked as a whole image of the stated type, served back with its own type.
import { createHash } from 'node:crypto'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import type { Actor } from '../audit/recorder.ts'
import { logoUrl } from '../users/present.ts'
import { imageSize, isWholeImage, LOGO_MAX_SIDE, type LogoMimeType } from './logo-image.ts'
import type { Tenant } from './queries.ts'
import { deleteLogo, findLogo, type Logo, upsertLogo } from './queries.ts'
import type { LogoBody } from './schemas.ts'

export const LOGO_MAX_BYTES = 512 * 1024
/** The base64 length of LOGO_MAX_BYTES (padded). */
export const LOGO_MAX_BASE64 = Math.ceil(LOGO_MAX_BYTES / 3) * 4
/**
 * The PUT body limit: the largest logo as base64, a `data:` prefix and the JSON around it,
 * with room for whitespace. A larger body is refused from its Content-Length, unread.
 */
export const LOGO_BODY_LIMIT = LOGO_MAX_BASE64 + 4096

const DATA_URL_PREFIX = /^data:([^;,]{1,100});base64,/i
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function invalid(message: string): never {
  fail('invalid_logo', { message })
}

/**
 * Decodes `data` (base64, optionally as a data: URL) into the image bytes. The decoded
 * size is computed from the length of the text and refused before anything is decoded.
 */
export function decodeLogo(mimeType: LogoMimeType, data: string): Buffer {
  let payload = data
  const prefix = DATA_URL_PREFIX.exec(data)
  if (prefix) {
    if (prefix[1].toLowerCase() !== mimeType) invalid('The data: prefix names another type.')
    payload = data.slice(prefix[0].length)
  }
  if (payload.length === 0 || payload.length % 4 !== 0) invalid('The logo is not valid base64.')
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0
  if ((payload.length / 4) * 3 - padding > LOGO_MAX_BYTES) {
    invalid('The logo must be at most 512 KiB.')
  }
  if (!BASE64.test(payload)) invalid('The logo is not valid base64.')
  const bytes = Buffer.from(payload, 'base64')
  if (!isWholeImage(mimeType, bytes)) invalid(`The logo is not a valid ${mimeType} image.`)
  const size = imageSize(mimeType, bytes)
  if (!size || size.width > LOGO_MAX_SIDE || size.height > LOGO_MAX_SIDE) {
    invalid(`The logo must be at most ${LOGO_MAX_SIDE} pixels on a side.`)
  }
  return bytes
}

export async function putLogo(
  deps: Pick<Deps, 'audit' | 'clock' | 'config' | 'db' | 'tenants'>,
  tenant: Tenant,
  input: LogoBody,
  actor: Actor,
) {
  const bytes = decodeLogo(input.mimeType, input.data)
  const updatedAt = deps.clock.now()
  const etag = `"${createHash('sha256').update(bytes).digest('base64url')}"`
  await deps.db.transaction(async (tx) => {
    await upsertLogo(tx, {
      tenantId: tenant.id,
      mimeType: input.mimeType,
      data: bytes,
      etag,
      updatedAt,
    })
    await deps.audit.record(tx, tenant.id, actor, [
      {
        action: 'TenantUpdated',
        metadata: { fields: ['logo'], mimeType: input.mimeType, bytes: bytes.length },
      },
    ])
  })
  deps.tenants.forgetLogo(tenant.id)
  return {
    logoUrl: logoUrl(deps.config, tenant.slug, true),
    mimeType: input.mimeType,
    updatedAt: updatedAt.toISOString(),
  }
}

/** Removes the logo. Removing a logo that is not there succeeds and records nothing. */
export async function removeLogo(
  deps: Pick<Deps, 'audit' | 'db' | 'tenants'>,
  tenant: Tenant,
  actor: Actor,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    if (!(await deleteLogo(tx, tenant.id))) return
    await deps.audit.record(tx, tenant.id, actor, [
      { action: 'TenantUpdated', metadata: { fields: ['logo'], removed: true } },
    ])
  })
  deps.tenants.forgetLogo(tenant.id)
}

export async function readLogo(deps: Pick<Deps, 'db'>, tenantId: string): Promise<Logo> {
  return (await findLogo(deps.db, tenantId)) ?? fail('not_found')
}

/** If-None-Match (RFC 9110 §13.1.2): weak comparison, a list of tags, or `*`. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false
  if (header.trim() === '*') return true
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .includes(etag)
}
