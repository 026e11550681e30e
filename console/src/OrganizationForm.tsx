// The fields of an organization (CONTRACT §18), for creating one and for editing it: its
// name, a description, whether its tokens need a second factor (mfaRequired), and JIT
// membership: the email domains whose verified addresses join it at sign-in (one a line)
// and the organization roles (§17 roles of kind organization) they join with, ticked among
// the tenant's. The API checks the rest and its messages are shown beside the field they
// name: a malformed domain, and 409 domain_taken (another organization claims it), go to
// the domains. On edit the body holds only what changed; `jit` is sent whole, as the API
// replaces the domains and roles together.
import { useState } from 'react'
import type { Schemas } from './api.ts'
import { Check, type FormProps, fieldsOf, SubmitButton, submitted, TextField } from './fields.tsx'
import { useRoles } from './Roles.tsx'
import { changedFrom, ErrorText, FieldError, formErrors } from './ui.tsx'

type Organization = Schemas['Organization']

interface Draft {
  name: string
  description: string
  mfaRequired: boolean
  domains: string
  roles: string[]
}

const FIELDS = ['name', 'description', 'mfaRequired', 'jit.emailDomains', 'jit.roles']

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)

const draftOf = (o?: Organization): Draft => ({
  name: o?.name ?? '',
  description: o?.description ?? '',
  mfaRequired: o?.mfaRequired ?? false,
  domains: o?.jit.emailDomains.join('\n') ?? '',
  roles: o?.jit.roles ?? [],
})

/** The body for the API; on edit only what changed from `stored`. */
function bodyOf(draft: Draft, stored?: Draft): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: draft.name.trim(),
    // On edit an emptied description removes it; on create it is left out.
    description: draft.description.trim() || (stored ? null : undefined),
    mfaRequired: draft.mfaRequired,
    jit: { emailDomains: lines(draft.domains), roles: [...draft.roles].sort() },
  }
  if (!stored) return body
  return changedFrom(body, bodyOf(stored))
}

export function OrganizationForm(props: FormProps<Organization>) {
  const { initial } = props
  const [draft, setDraft] = useState<Draft>(() => draftOf(initial))
  const errors = formErrors(props.error, FIELDS, { domain_taken: 'jit.emailDomains' })
  const id = initial ? `org-${initial.id}` : 'new-org'
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }))
  const submit = submitted(() => props.onSubmit(bodyOf(draft, initial && draftOf(initial))))
  const text = fieldsOf(id, draft, set, errors)
  return (
    <form className="settings org-form" onSubmit={submit} noValidate>
      <ErrorText error={errors.rest} />
      <TextField label="Name" required maxLength={120} {...text('name')} />
      <TextField label="Description (optional)" maxLength={500} {...text('description')} />
      <Check
        id={`${id}-mfa`}
        checked={draft.mfaRequired}
        onChange={(checked) => set('mfaRequired', checked)}
        label="Require a second factor for this organization’s tokens"
      />
      <fieldset className="jit">
        <legend>Just-in-time membership</legend>
        <TextField
          label="Email domains"
          hint="One a line, e.g. acme.com. A person whose verified address is of one of these joins at their next sign-in; a domain belongs to one organization."
          rows={3}
          spellCheck={false}
          {...text('domains', 'jit.emailDomains')}
        />
        <RoleChecks
          id={`${id}-jit`}
          legend="Roles they join with"
          chosen={draft.roles}
          onChange={(roles) => set('roles', roles)}
          messages={errors.of('jit.roles')}
        />
      </fieldset>
      <SubmitButton label={props.submitLabel} pending={props.pending} />
    </form>
  )
}

/**
 * The tenant's organization roles as checkboxes (every page of GET roles, those of kind
 * organization); a chosen name no longer listed stays shown, ticked, so saving keeps what
 * the API answered until the admin unticks it.
 */
export function RoleChecks(props: {
  id: string
  legend: string
  chosen: string[]
  onChange(roles: string[]): void
  messages?: string[]
}) {
  const { id, chosen, onChange, messages = [] } = props
  const roles = useRoles()
  const listed = (roles.data ?? []).filter((r) => r.kind === 'organization').map((r) => r.name)
  const shown = [...listed, ...chosen.filter((n) => !listed.includes(n))]
  return (
    <fieldset
      className="org-roles"
      aria-describedby={messages.length ? `${id}-roles-error` : undefined}
    >
      <legend>{props.legend}</legend>
      <ErrorText error={roles.error} />
      {roles.isSuccess && shown.length === 0 && (
        <p className="hint">
          No organization roles yet: create one of kind organization in <a href="#roles">Roles</a>.
          Without one, members hold no role here.
        </p>
      )}
      {shown.map((name) => (
        <Check
          key={name}
          id={`${id}-role-${name}`}
          checked={chosen.includes(name)}
          onChange={(on) => onChange(on ? [...chosen, name] : chosen.filter((r) => r !== name))}
          label={name}
        />
      ))}
      <FieldError id={`${id}-roles-error`} messages={messages} />
    </fieldset>
  )
}
