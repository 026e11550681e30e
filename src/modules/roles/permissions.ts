// The tenant permission catalogue and the built-in roles (CONTRACT §17). The SPEC's base
// role (Member, Admin) stays the user's `role`; what it may do is read from here. This is
// the one file of src/ that names the built-in roles: every other file asks the helpers
// below (test/permissions-seam.test.ts keeps it so). It imports nothing, so any layer
// (the Drizzle schema included) may use it.

/** Every tenant permission, fixed by the service, with what it guards. */
export const PERMISSIONS = [
  ['tenant:read', 'Read the workspace settings.'],
  [
    'tenant:write',
    'Change the workspace: settings, logo, policies, identity-provider credentials, branding; delete it.',
  ],
  ['users:read', 'List users and read their sessions.'],
  [
    'users:write',
    'Change users: profile, base role, suspend, delete, erase, TOTP reset, end sessions, import.',
  ],
  ['roles:write', 'Create, change and delete roles, and assign them to users.'],
  ['invites:write', 'List, send and revoke invitations.'],
  ['apikeys:write', 'List, create and revoke API keys.'],
  ['audit:read', 'Read and export the audit log.'],
  ['applications:write', 'Manage OpenID applications and API resources.'],
  ['connections:write', 'Manage SSO and social connections.'],
  ['webhooks:write', 'Manage webhook endpoints and their deliveries.'],
  ['hooks:write', 'Manage extension hooks.'],
  ['organizations:write', 'Manage organizations.'],
  ['users:impersonate', 'Sign in as another user of the workspace.'],
] as const satisfies readonly (readonly [string, string])[]

export type Permission = (typeof PERMISSIONS)[number][0]

/** The names, in catalogue order. */
export const PERMISSION_NAMES: readonly Permission[] = PERMISSIONS.map(([name]) => name)

const KNOWN = new Set<string>(PERMISSION_NAMES)

export const isPermission = (name: string): name is Permission => KNOWN.has(name)

/** GET /v1/{slug}/permissions. */
export const PERMISSION_CATALOGUE = PERMISSIONS.map(([name, description]) => ({
  name,
  description,
}))

/** The SPEC's base roles: every user holds exactly one (`users.role`). */
export const ADMIN_ROLE = 'Admin'
export const MEMBER_ROLE = 'Member'
export const BASE_ROLES = [MEMBER_ROLE, ADMIN_ROLE] as const
export type BaseRole = (typeof BASE_ROLES)[number]

/** The built-in roles as GET roles lists them: Admin holds every permission, Member none. */
export const BUILT_IN_ROLES: readonly { name: BaseRole; permissions: readonly Permission[] }[] = [
  { name: ADMIN_ROLE, permissions: PERMISSION_NAMES },
  { name: MEMBER_ROLE, permissions: [] },
]

const EVERY = Object.freeze([...PERMISSION_NAMES].sort()) as readonly Permission[]
const NONE: readonly Permission[] = Object.freeze([])

export const isBaseRole = (role: string): role is BaseRole =>
  (BASE_ROLES as readonly string[]).includes(role)

/** Whether a base role is the SPEC's Admin (the last-admin rule, the credential guard). */
export const isAdminRole = (role: string): boolean => role === ADMIN_ROLE

/** A stored or claimed role as a base role: anything but Admin is a Member. */
export const baseRole = (role: string | null | undefined): BaseRole =>
  role === ADMIN_ROLE ? ADMIN_ROLE : MEMBER_ROLE

/** Whether `name` is a built-in role's, in any case (custom roles may not take it). */
export const isBuiltInRoleName = (name: string): boolean =>
  BASE_ROLES.some((role) => role.toLowerCase() === name.toLowerCase())

/** The tenant permissions a base role grants, sorted. */
export const basePermissions = (role: string): readonly Permission[] =>
  isAdminRole(role) ? EVERY : NONE

/** A base role's permissions and those its custom roles grant, sorted, each once. */
export function effectivePermissions(
  role: string,
  rolePermissions: readonly string[],
): readonly Permission[] {
  if (isAdminRole(role) || rolePermissions.length === 0) return basePermissions(role)
  return [...new Set(rolePermissions.filter(isPermission))].sort()
}

/** Every permission, sorted: what an API key holds today (only Admins create keys). */
export const ALL_PERMISSIONS: readonly Permission[] = EVERY

/**
 * Whether holding `held` lets a caller in where `needed` is asked: the permission itself,
 * or, for a `:read`, the `:write` of the same kind (CONTRACT §17).
 */
export function grants(held: readonly string[], needed: Permission): boolean {
  if (held.includes(needed)) return true
  return needed.endsWith(':read') && held.includes(`${needed.slice(0, -':read'.length)}:write`)
}

/** Whether `held` holds every permission of `wanted` (the no-escalation rule). */
export const holdsAll = (held: readonly string[], wanted: readonly string[]): boolean =>
  wanted.every((p) => held.includes(p))
