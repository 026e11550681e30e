// One record's page (an application, an API resource, a connection, a hook, a webhook, an
// organization): the record read by id, its edits, enabling and disabling, and deletion,
// which goes back to the list; its creation, which opens that page; and the pieces such a
// page shows: the Enable/Disable and Delete buttons, the settings section with its "Saved."
// and the link that tries a connection's sign-in in a new tab.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { ConfirmButton, handOverSecret } from './ui.tsx'

/**
 * The record `[area, id]` of the list `[area]`, whose page is `#area`. A save (an edit or a
 * toggle) puts the record answered in the cache and loads the list again; `changed` runs
 * after it too (what else a change touches). A deletion forgets the record and goes back to
 * `#area`: with `dropList` the list is forgotten too, so that it loads afresh rather than
 * show the deleted record for a moment; otherwise it is loaded again.
 */
export function useRecord<T>(options: {
  area: string
  id: string
  read(): Promise<T>
  update(body: Record<string, unknown>): Promise<T>
  /** None where the page deletes nothing (an API resource is deleted from its list). */
  remove?(): Promise<unknown>
  dropList?: boolean
  changed?(): void
}) {
  const { area, id } = options
  const queries = useQueryClient()
  const key = [area, id]
  const record = useQuery({ queryKey: key, queryFn: options.read })
  const saved = (updated: T) => {
    queries.setQueryData(key, updated)
    void queries.invalidateQueries({ queryKey: [area], exact: true })
    options.changed?.()
  }
  // How many edits were saved: a form keyed by it starts afresh from the record answered
  // (a typed secret is cleared), even when two saves share one updatedAt.
  const [saves, setSaves] = useState(0)
  const update = useMutation({
    mutationFn: options.update,
    onSuccess: (updated) => {
      saved(updated)
      setSaves((n) => n + 1)
    },
  })
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => options.update({ enabled }),
    onSuccess: saved,
  })
  const remove = useMutation({
    mutationFn: options.remove,
    onSuccess: () => {
      queries.removeQueries({ queryKey: key })
      if (options.dropList) queries.removeQueries({ queryKey: [area], exact: true })
      else void queries.invalidateQueries({ queryKey: [area] })
      window.location.hash = `#${area}`
    },
  })
  return { record, update, toggle, remove, saves }
}

/**
 * A record of `area` created from a form's body: the list loads again and the new record's
 * page opens, handed the secret the API answered with it (which that page shows once).
 */
export function useCreate(
  area: string,
  create: (body: Record<string, unknown>) => Promise<{ id: string; secret?: string | null }>,
) {
  const queries = useQueryClient()
  return useMutation({
    mutationFn: create,
    onSuccess: ({ id, secret }) => {
      void queries.invalidateQueries({ queryKey: [area] })
      if (secret) handOverSecret(`${area}/${id}`, secret)
      window.location.hash = `#${area}?id=${encodeURIComponent(id)}`
    },
  })
}

/** Enable or Disable, as the record is. */
export function EnableButton(props: {
  enabled: boolean
  toggle: { isPending: boolean; mutate(enabled: boolean): void }
}) {
  const { enabled, toggle } = props
  return (
    <button type="button" disabled={toggle.isPending} onClick={() => toggle.mutate(!enabled)}>
      {enabled ? 'Disable' : 'Enable'}
    </button>
  )
}

/** Deletes the record once the page's question (`confirm`) is answered Yes. */
export function DeleteButton(props: {
  label: string
  confirm: string
  remove: { mutate(): void }
}) {
  return (
    <ConfirmButton
      label={props.label}
      danger
      confirm={props.confirm}
      onConfirm={() => props.remove.mutate()}
    />
  )
}

/** The record's form under "Settings", and "Saved." once a save is answered. */
export function SettingsSection(props: { id: string; saved: boolean; children: ReactNode }) {
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>Settings</h2>
      {props.children}
      {props.saved && <p role="status">Saved.</p>}
    </section>
  )
}

/** A connection's hosted start page, opened in a new tab to try its sign-in. */
export function TestConnectionLink({ href }: { href: string }) {
  return (
    <a className="button-link" href={href} target="_blank" rel="noopener noreferrer">
      Test this connection
      <span className="visually-hidden"> (opens a new tab)</span>
    </a>
  )
}
