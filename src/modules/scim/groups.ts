// SCIM Groups (CONTRACT §17, RFC 7643 §4.2, RFC 7644) on the groups module's services:
// this file speaks SCIM (paging, filters, excludedAttributes, If-Match, SCIM's errors) and
// the groups module holds the rules (unique displayName, members that are users of the
// tenant, no escalation, the audit rows).
import type { Deps } from '../../deps.ts'
import { AppError } from '../../lib/errors.ts'
import {
  changeGroup,
  createGroup,
  deleteGroup,
  readGroup as findGroupView,
  findGroupWindow,
  type GroupView,
  views,
} from '../groups/service.ts'
import type { Caller } from '../roles/service.ts'
import type { Tenant } from '../tenants/tenant.ts'
import { invalidValue, notFound, ScimError, uniqueness } from './errors.ts'
import { parseGroupFilter } from './filter.ts'
import { groupVersion, patchGroup, readGroup, stateOf, toScimGroup } from './group-resource.ts'
import { LIST_SCHEMA } from './resource.ts'
import { baseUrl, type ListQuery, listWindow } from './service.ts'

type GroupDeps = Pick<Deps, 'audit' | 'clock' | 'config' | 'db'>

/** `excludedAttributes` (RFC 7644 §3.4.2.5): only `members` changes what is answered. */
export function excludesMembers(excluded: string | undefined): boolean {
  if (excluded === undefined) return false
  return excluded
    .split(',')
    .map((a) => a.trim().toLowerCase())
    .some((a) => a === 'members' || a === 'urn:ietf:params:scim:schemas:core:2.0:group:members')
}

export async function listScimGroups(
  deps: GroupDeps,
  tenant: Tenant,
  query: ListQuery,
  options: { members: boolean },
) {
  const clauses = query.filter === undefined ? [] : parseGroupFilter(query.filter)
  const { startIndex, window } = listWindow(query)
  const { total, groups } = await findGroupWindow(deps.db, tenant.id, clauses, window)
  const base = baseUrl(deps, tenant)
  const shown = options.members
    ? await views(deps.db, tenant.id, groups)
    : groups.map((group): GroupView => ({ group, members: [], roles: [] }))
  return {
    schemas: [LIST_SCHEMA],
    totalResults: total,
    startIndex,
    itemsPerPage: shown.length,
    Resources: shown.map((v) => toScimGroup(v, base, options)),
  }
}

export async function getScimGroup(deps: GroupDeps, tenant: Tenant, id: string) {
  const found = await findGroupView(deps.db, tenant.id, id)
  if (!found) throw notFound(`No group ${id}.`)
  return found
}

export async function provisionGroup(
  deps: GroupDeps,
  tenant: Tenant,
  body: unknown,
  caller: Caller,
) {
  const state = readGroup(body)
  return scimErrors(() => createGroup(deps, tenant.id, state, caller))
}

export async function replaceGroup(
  deps: GroupDeps,
  tenant: Tenant,
  id: string,
  body: unknown,
  caller: Caller,
  ifMatch: string | undefined,
) {
  const state = readGroup(body)
  return scimErrors(() =>
    changeGroup(
      deps,
      tenant.id,
      id,
      () => state,
      caller,
      (g) => checkVersion(g, ifMatch),
    ),
  )
}

export async function patchScimGroup(
  deps: GroupDeps,
  tenant: Tenant,
  id: string,
  body: unknown,
  caller: Caller,
  ifMatch: string | undefined,
) {
  return scimErrors(() =>
    changeGroup(
      deps,
      tenant.id,
      id,
      (current) => patchGroup(stateOf(current), body),
      caller,
      (g) => checkVersion(g, ifMatch),
    ),
  )
}

export async function deprovisionGroup(
  deps: GroupDeps,
  tenant: Tenant,
  id: string,
  caller: Caller,
  ifMatch: string | undefined,
) {
  await scimErrors(() => deleteGroup(deps, tenant.id, id, caller, (g) => checkVersion(g, ifMatch)))
}

/** If-Match (RFC 7644 §3.14): `*` or a list of tags, one the group's version; else 412. */
function checkVersion(view: GroupView, ifMatch: string | undefined) {
  if (ifMatch === undefined) return
  const tags = ifMatch.split(',').map((t) => t.trim().replace(/^W\//, ''))
  if (tags.includes('*')) return
  if (!tags.includes(groupVersion(view).replace(/^W\//, ''))) {
    throw new ScimError(412, 'The resource has changed since that version (If-Match).')
  }
}

/** The groups module's refusals in SCIM's words. */
async function scimErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    if (error.reason === 'not_found') throw notFound('No such group.')
    if (error.reason === 'name_taken') throw uniqueness(error.message)
    if (error.reason === 'validation') throw invalidValue(error.message)
    throw error
  }
}
