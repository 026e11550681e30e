// The SCIM Group resource (RFC 7643 §4.2; CONTRACT §17): displayName, externalId and
// members [{value: user id, display, $ref, type}], read from a client's body and shown from
// the groups module's view. PATCH (RFC 7644 §3.5.2) over it, as the directories send it:
//   - add / replace / remove of `members` (a list of {value}); remove with a list removes
//     those, without a value every member;
//   - Entra ID's remove with path `members[value eq "id"]`;
//   - Okta's replace of the whole list, with path `members` or without a path
//     (`{"op":"replace","value":{"id":…,"displayName":…,"members":[…]}}`);
//   - replace (or add) of displayName and externalId, remove of externalId.
// op names in any case. An attribute the Group has not: 400 invalidPath; id, meta and
// schemas: 400 mutability; a value of the wrong shape: 400 invalidValue.
import { createHash } from 'node:crypto'
import type { GroupState, GroupView } from '../groups/service.ts'
import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget } from './errors.ts'
import { canonical } from './paths.ts'
import { attribute, isObject } from './resource.ts'

export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'

const MAX_OPERATIONS = 100

/**
 * The weak entity tag (RFC 7644 §3.14): a digest of everything the resource shows, so any
 * change of it changes the tag, even within one clock tick.
 */
export function groupVersion(view: GroupView): string {
  const { group } = view
  const shown = [
    group.id,
    group.displayName,
    group.externalId,
    group.updatedAt.toISOString(),
    view.members.map((m) => [m.userId, m.displayName ?? m.email]).sort(),
  ]
  const digest = createHash('sha256').update(JSON.stringify(shown)).digest('base64url')
  return `W/"${digest.slice(0, 22)}"`
}

export function toScimGroup(view: GroupView, base: string, options: { members?: boolean } = {}) {
  const { group } = view
  const location = `${base}/Groups/${group.id}`
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    ...(group.externalId === null ? {} : { externalId: group.externalId }),
    displayName: group.displayName,
    ...(options.members === false
      ? {}
      : {
          members: view.members.map((m) => ({
            value: m.userId,
            display: m.displayName ?? m.email,
            $ref: `${base}/Users/${m.userId}`,
            type: 'User',
          })),
        }),
    meta: {
      resourceType: 'Group',
      created: group.createdAt.toISOString(),
      lastModified: group.updatedAt.toISOString(),
      location,
      version: groupVersion(view),
    },
  }
}

/** The state a view shows, to be changed by a PATCH. */
export function stateOf(view: GroupView): GroupState {
  return {
    displayName: view.group.displayName,
    externalId: view.group.externalId,
    memberIds: view.members.map((m) => m.userId),
  }
}

/** Reads a Group resource sent by a client (POST, PUT); 400 invalidValue when it is none. */
export function readGroup(body: unknown): GroupState {
  if (!isObject(body)) throw invalidValue('The request body must be a Group resource.')
  return {
    displayName: readDisplayName(attribute(body, 'displayName')),
    externalId: readExternalId(attribute(body, 'externalId')),
    memberIds: readMembers(attribute(body, 'members') ?? []),
  }
}

function readDisplayName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidValue('displayName is required and must be a string.')
  }
  return value
}

function readExternalId(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value !== 'string') throw invalidValue('externalId must be a string.')
  return value
}

/** A list of members ({value: user id}, or a bare member object). */
function readMembers(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value]
  return list.map((member) => {
    const id = isObject(member) ? attribute(member, 'value') : undefined
    if (typeof id !== 'string' || id === '') {
      throw invalidValue('Each member must be an object with the user id as value.')
    }
    return id.toLowerCase()
  })
}

const MEMBER_FILTER = /^members\[\s*value\s+eq\s+("(?:[^"\\]|\\.)*")\s*\]$/i

type Target =
  | { attribute: 'displayName' | 'externalId' | 'members' }
  | { attribute: 'member'; id: string }

function parseGroupPath(path: string): Target {
  const text = path.trim()
  const bare = text.toLowerCase().startsWith(`${GROUP_SCHEMA.toLowerCase()}:`)
    ? text.slice(GROUP_SCHEMA.length + 1)
    : text
  const filtered = MEMBER_FILTER.exec(bare)
  if (filtered) {
    let id: unknown
    try {
      id = JSON.parse(filtered[1])
    } catch {
      throw invalidPath('The value filter holds a malformed string.')
    }
    return { attribute: 'member', id: String(id).toLowerCase() }
  }
  const name = canonical(bare, ['displayName', 'externalId', 'members'])
  if (name) return { attribute: name as 'displayName' | 'externalId' | 'members' }
  if (canonical(bare, ['id', 'meta', 'schemas'])) throw mutability(`${bare} is read-only.`)
  if (/^members\b/i.test(bare))
    throw invalidPath(`The members path "${clip(path)}" is not supported.`)
  throw invalidPath(`The Group resource has no attribute "${clip(path)}".`)
}

const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text)

type Op = 'add' | 'replace' | 'remove'

/** The state after the PatchOp `body`; `state` is left as it was. */
export function patchGroup(state: GroupState, body: unknown): GroupState {
  if (!isObject(body)) throw invalidSyntax('The request body must be a PatchOp message.')
  const operations = attribute(body, 'Operations')
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalidSyntax('Operations must be a non-empty list.')
  }
  if (operations.length > MAX_OPERATIONS) {
    throw invalidSyntax(`At most ${MAX_OPERATIONS} operations a request.`)
  }
  const next: GroupState = { ...state, memberIds: [...state.memberIds] }
  for (const operation of operations) {
    if (!isObject(operation)) throw invalidSyntax('Each operation must be an object.')
    const name = attribute(operation, 'op')
    const op = (
      typeof name === 'string' ? canonical(name, ['add', 'replace', 'remove']) : undefined
    ) as Op | undefined
    if (!op) throw invalidSyntax('op must be add, replace or remove.')
    const path = attribute(operation, 'path')
    const value = attribute(operation, 'value')
    if (path === undefined || path === null || path === '') {
      if (op === 'remove') throw noTarget('remove needs a path.')
      if (!isObject(value))
        throw invalidValue(`${op} without a path takes an object of attributes.`)
      for (const [key, inner] of Object.entries(value)) {
        let target: Target
        try {
          target = parseGroupPath(key)
        } catch {
          continue // read-only or unknown attributes in a value are ignored, as in a PUT body
        }
        apply(next, op, target, inner)
      }
    } else {
      if (typeof path !== 'string') throw invalidPath('path must be a string.')
      apply(next, op, parseGroupPath(path), value)
    }
  }
  return next
}

function apply(state: GroupState, op: Op, target: Target, value: unknown) {
  if (op !== 'remove' && value === undefined) throw invalidValue(`${op} needs a value.`)
  switch (target.attribute) {
    case 'displayName':
      if (op === 'remove') throw invalidValue('displayName is required; it cannot be removed.')
      state.displayName = readDisplayName(value)
      return
    case 'externalId':
      state.externalId = op === 'remove' ? null : readExternalId(value)
      return
    case 'member':
      if (op !== 'remove') {
        throw invalidPath('A members value filter is only supported by remove.')
      }
      state.memberIds = state.memberIds.filter((id) => id !== target.id)
      return
    case 'members': {
      if (op === 'remove') {
        if (value === undefined || value === null) {
          state.memberIds = []
          return
        }
        const gone = new Set(readMembers(value))
        state.memberIds = state.memberIds.filter((id) => !gone.has(id))
        return
      }
      const incoming = value === null ? [] : readMembers(value)
      state.memberIds = op === 'replace' ? incoming : [...state.memberIds, ...incoming]
    }
  }
}
