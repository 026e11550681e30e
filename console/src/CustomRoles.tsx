// The custom roles a user or a group holds directly (CONTRACT §17), ticked among the
// tenant's and saved together: PUT users/{id}/roles and groups/{id}/roles replace the set.
// The API refuses a role the admin may not grant (403 permission_required), shown above the
// choice.
import { type QueryKey, useMutation, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import type { Schemas } from './api.ts'
import { Check, submitted } from './fields.tsx'
import { useRoles } from './Roles.tsx'
import { ErrorText } from './ui.tsx'

type Role = Schemas['Role']

export function CustomRolesForm(props: {
  id: string
  legend: string
  held: string[]
  /** Which of the tenant's roles are offered. */
  offered(role: Role): boolean
  save(roles: string[]): Promise<unknown>
  /** What a change touches, loaded again once it is saved. */
  touches: QueryKey[]
  onDone(): void
}) {
  const { id, onDone } = props
  const queries = useQueryClient()
  const roles = useRoles()
  const [chosen, setChosen] = useState<string[]>(props.held)
  const custom = (roles.data ?? []).filter(props.offered)
  const save = useMutation({
    // In the list's order, whatever order they were ticked in.
    mutationFn: () => props.save(custom.map((r) => r.name).filter((n) => chosen.includes(n))),
    onSuccess: () => {
      for (const key of props.touches) void queries.invalidateQueries({ queryKey: key })
      onDone()
    },
  })
  return (
    <form className="sub user-roles" onSubmit={submitted(() => save.mutate())}>
      <ErrorText error={roles.error ?? save.error} />
      {roles.isSuccess && custom.length === 0 ? (
        <p>
          No custom roles yet: create one in <a href="#roles">Roles</a>.
        </p>
      ) : (
        <fieldset className="event-list">
          <legend>{props.legend}</legend>
          {custom.map((role) => (
            <Check
              key={role.id}
              id={`${id}-${role.id}`}
              checked={chosen.includes(role.name)}
              onChange={(on) =>
                setChosen(on ? [...chosen, role.name] : chosen.filter((n) => n !== role.name))
              }
              label={role.name}
            />
          ))}
        </fieldset>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={save.isPending || !roles.isSuccess}>
          Save roles
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  )
}
