// Creating a tenant with its first admin (SPEC capability 1; CONTRACT §2).
import type { Handle } from '../../db/client.ts'
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'
import { uuidv7 } from '../../lib/ids.ts'
import type { Actor } from '../audit/recorder.ts'
import { ADMIN_ROLE } from '../roles/permissions.ts'
import type { TokenEnvelope } from '../sessions/service.ts'
import { createUser, preparePassword } from '../users/service.ts'
import { findTenantById, insertTenant, logoExists, type Tenant } from './queries.ts'
import type { CreateTenantBody } from './schemas.ts'

export type { Tenant }

/** Slugs that would shadow a route or confuse a reader of a URL. */
export const RESERVED_SLUGS = new Set([
  'v1',
  'v2',
  'tenants',
  'invites',
  'health',
  'ready',
  'docs',
  'openapi',
  'openapi.json',
  'api',
  'admin',
  'auth',
  'static',
  'assets',
  'console',
  'login',
  'logout',
  'signup',
  'me',
  'www',
])

export async function createTenant(
  deps: Pick<Deps, 'audit' | 'clock' | 'db' | 'sessions' | 'tenants'>,
  input: CreateTenantBody,
  actor: Actor,
): Promise<TokenEnvelope & { tenantSlug: string }> {
  const { slug, name, plan = 'Free' } = input.tenant
  if (RESERVED_SLUGS.has(slug)) fail('invalid_slug')
  const passwordHash = await preparePassword(input.admin.password, input.admin.email, name)
  const envelope = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now()
    const tenant = await insertTenant(tx, {
      id: uuidv7(now.getTime()),
      slug,
      name,
      plan,
      createdAt: now,
      updatedAt: now,
    })
    if (!tenant) fail('slug_taken')
    const admin = await createUser(
      deps,
      tx,
      tenant,
      {
        email: input.admin.email,
        passwordHash,
        role: ADMIN_ROLE,
        status: 'Active',
        emailVerified: false,
      },
      () => fail('email_taken'),
    )
    const who = { ...actor, type: 'user' as const, id: admin.id }
    await deps.audit.record(tx, tenant.id, who, [
      { action: 'TenantCreated', userId: admin.id, metadata: { slug, name, plan } },
      {
        action: 'UserSignup',
        userId: admin.id,
        email: admin.emailNormalized,
        metadata: { role: ADMIN_ROLE },
      },
    ])
    return deps.sessions.start(tx, tenant, admin, who)
  })
  deps.tenants.forget(slug)
  return { ...envelope, tenantSlug: slug }
}

/** The live tenant `tenantId` with whether it has a logo (a page drawn by id, not by slug). */
export function tenantById(
  deps: Pick<Deps, 'db'>,
  tenantId: string,
): Promise<{ tenant: Tenant; hasLogo: boolean } | undefined> {
  return findTenantById(deps.db, tenantId)
}

/** Whether the tenant has uploaded a logo (the pages' brand). */
export function tenantHasLogo(deps: Pick<Deps, 'db'>, tenantId: string): Promise<boolean> {
  return logoExists(deps.db, tenantId)
}

/** The tenant's branding (CONTRACT §20) for its mails, read by id; null without one. */
export async function tenantBranding(db: Handle, tenantId: string) {
  return (await findTenantById(db, tenantId))?.tenant.branding ?? null
}
