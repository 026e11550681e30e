// Pieces every panel uses: keyset pages loaded one after another (the API's nextCursor),
// an error line, the API's errors by form field, what an edit changed, a locale's name, a
// button that copies, a button that asks before it acts, a value (a secret, a link) the API
// answers once, and a table.
import { type QueryKey, useInfiniteQuery } from '@tanstack/react-query'
import { type ReactNode, useEffect, useRef, useState } from 'react'
import { AuthServiceError, describeError } from './api.ts'

export interface Page<T> {
  items: T[]
  nextCursor: string | null
}

/**
 * Every page loaded so far, and `more()` for the next one. `poll` says, from the items
 * loaded, how often to load them again (milliseconds), or false to stop: a list that
 * changes by itself (webhook deliveries in progress).
 */
export function usePages<T>(
  key: QueryKey,
  load: (cursor: string | undefined) => Promise<Page<T>>,
  poll?: (items: T[]) => number | false,
) {
  const query = useInfiniteQuery({
    queryKey: key,
    queryFn: ({ pageParam }) => load(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: poll
      ? (q) => poll(q.state.data?.pages.flatMap((p) => p.items) ?? [])
      : undefined,
  })
  const items = query.data?.pages.flatMap((p) => p.items) ?? []
  return {
    items,
    refresh: () => query.refetch(),
    refreshing: query.isRefetching,
    error: query.error,
    loading: query.isPending,
    hasMore: query.hasNextPage,
    loadingMore: query.isFetchingNextPage,
    more: () => query.fetchNextPage(),
  }
}

/** Loads the next page when the sentinel scrolls into view; a button does the same. */
export function MoreButton(props: {
  hasMore: boolean
  loading: boolean
  more(): void
  auto?: boolean
}) {
  const ref = useRef<HTMLButtonElement>(null)
  const { hasMore, loading, more, auto } = props
  useEffect(() => {
    if (!auto || !hasMore || !ref.current || typeof IntersectionObserver === 'undefined') return
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !loading) more()
    })
    observer.observe(ref.current)
    return () => observer.disconnect()
  }, [auto, hasMore, loading, more])
  if (!hasMore) return null
  return (
    <button type="button" ref={ref} onClick={more} disabled={loading} className="more">
      {loading ? 'Loading…' : 'Load more'}
    </button>
  )
}

export function ErrorText({ error }: { error: unknown }) {
  if (!error) return null
  return (
    <p className="error" role="alert">
      {describeError(error)}
    </p>
  )
}

/**
 * An error of a form, split by field: each validation issue goes to the field its path
 * names (`body.redirectUris.1` → `redirectUris.1`), a reason that belongs to one field
 * (409 identifier_taken) to that field; `rest` is whatever no field of the form shows.
 */
export interface FormErrors {
  /** The messages of `field` and of everything under it (`scopes.0` holds `scopes.0.name`). */
  of(field: string, exactly?: boolean): string[]
  rest: unknown
  any: boolean
}

export function formErrors(
  error: unknown,
  fields: string[],
  reasons: Record<string, string> = {},
): FormErrors {
  const found: { path: string; message: string }[] = []
  let rest: unknown = error
  if (error instanceof AuthServiceError) {
    const field = error.reason ? reasons[error.reason] : undefined
    const issues = (error.details?.issues ?? []) as { path: string; message: string }[]
    if (field) {
      found.push({ path: field, message: error.message })
      rest = null
    } else if (issues.length) {
      for (const issue of issues) found.push({ ...issue, path: issue.path.replace(/^body\./, '') })
      const unplaced = found.filter((f) => !fields.some((name) => under(f.path, name)))
      // The field messages say what is wrong; the line above the form says where to look.
      rest = unplaced.length
        ? unplaced.map((f) => `${f.path}: ${f.message}`).join('; ')
        : 'Some fields need a change: see the messages beside them.'
    }
  }
  return {
    of: (field, exactly) =>
      found
        .filter((f) => (exactly ? f.path === field : under(f.path, field)))
        .map((f) => message(f, field)),
    rest,
    any: Boolean(error),
  }
}

const under = (path: string, field: string) => path === field || path.startsWith(`${field}.`)

/** An issue of a list's item (`redirectUris.1`) names its line, counted from 1. */
function message(issue: { path: string; message: string }, field: string): string {
  const item = /^\.(\d+)$/.exec(issue.path.slice(field.length))
  return item ? `Line ${Number(item[1]) + 1}: ${issue.message}` : issue.message
}

/** The messages of one field, which it names in aria-describedby (see `described`). */
export function FieldError({ id, messages }: { id: string; messages: string[] }) {
  if (messages.length === 0) return null
  return (
    <p className="field-error" id={id}>
      {messages.join(' ')}
    </p>
  )
}

/** A field's attributes: invalid while it has messages, described by them and its hint. */
export function described(id: string, messages: string[], hint?: string) {
  const ids = [hint, messages.length ? id : undefined].filter(Boolean).join(' ')
  return {
    'aria-invalid': messages.length > 0 || undefined,
    'aria-describedby': ids || undefined,
  }
}

/** The fields of `body` whose value differs from `before`'s: what an edit sends. */
export function changedFrom(
  body: Record<string, unknown>,
  before: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).filter(
      ([k, v]) => v !== undefined && JSON.stringify(v) !== JSON.stringify(before[k]),
    ),
  )
}

/** A locale named in its own language ("Deutsch"), as the pages' language picker names it. */
export const localeName = (l: string) => {
  const name = new Intl.DisplayNames([l], { type: 'language' }).of(l) ?? l
  return name.slice(0, 1).toLocaleUpperCase(l) + name.slice(1)
}

/** `what` names what is copied to a screen reader, where the button shows only its label. */
export function CopyButton(props: { text: string; label?: string; what?: string }) {
  const { text, label = 'Copy', what } = props
  const [done, setDone] = useState(false)
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setDone(true))
      }}
    >
      {done ? 'Copied' : label}
      {what && <span className="visually-hidden"> {what}</span>}
    </button>
  )
}

/** A fact of a `<dl>` to copy: its name, the value as code, a copy button naming `what`. */
export function CopyableFact(props: { label: string; value: string; what?: string }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd className="copyable">
        <code>{props.value}</code>
        <CopyButton text={props.value} what={props.what ?? props.label} />
      </dd>
    </>
  )
}

/** A button that asks "Are you sure?" in place before it acts. */
export function ConfirmButton(props: {
  label: string
  confirm: string
  onConfirm(): void
  danger?: boolean
}) {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return (
      <button
        type="button"
        className={props.danger ? 'danger' : undefined}
        onClick={() => setAsking(true)}
      >
        {props.label}
      </button>
    )
  }
  return (
    <span className="confirm">
      <span>{props.confirm}</span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          setAsking(false)
          props.onConfirm()
        }}
      >
        Yes
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        No
      </button>
    </span>
  )
}

/** The query after a panel's name in the hash (`#roles?id=…`: id). */
export const hashQuery = () => new URLSearchParams(window.location.hash.split('?')[1] ?? '')

/** A date and time in the browser's words; `seconds` for events seconds apart (hook calls). */
export const formatDate = (iso: string | null | undefined, seconds = false) =>
  iso
    ? new Date(iso).toLocaleString(undefined, {
        dateStyle: 'medium',
        timeStyle: seconds ? 'medium' : 'short',
      })
    : '—'

/**
 * Secrets just answered by the API (`area/id`: an application's, a webhook's, a hook's),
 * until that resource's page takes them: in memory only, so a reload (or another visit)
 * never shows one again.
 */
const handedOver = new Map<string, string>()

export function handOverSecret(key: string, secret: string): void {
  handedOver.set(key, secret)
}

/** The secret handed over for `key`, taken once; and a setter for one answered later. */
export function useHandedOverSecret(key: string): [string, (secret: string) => void] {
  const [secret, setSecret] = useState(() => handedOver.get(key) ?? '')
  useEffect(() => {
    handedOver.delete(key)
  }, [key])
  return [secret, setSecret]
}

/**
 * A value the service answers once (a secret, an invitation's link), with a copy button and,
 * given `onDone`, Done, which closes it. `children` say what it is.
 */
export function ShownOnce(props: {
  value: string
  testId: string
  copyLabel: string
  onDone?(): void
  children: ReactNode
}) {
  return (
    <div className="created" role="status">
      <p>{props.children}</p>
      <code className="secret" data-testid={props.testId}>
        {props.value}
      </code>
      <div className="row">
        <CopyButton text={props.value} label={props.copyLabel} />
        {props.onDone && (
          <button type="button" onClick={props.onDone}>
            Done
          </button>
        )}
      </div>
    </div>
  )
}

/**
 * A secret the service keeps sealed and never answers again: shown with a copy button
 * until Done. `children` follow the warning (what it is for, what to do if it is lost).
 */
export function SecretOnce(props: {
  secret: string
  what: string
  testId: string
  copyLabel?: string
  onDone(): void
  children?: ReactNode
}) {
  return (
    <ShownOnce
      value={props.secret}
      testId={props.testId}
      copyLabel={props.copyLabel ?? 'Copy secret'}
      onDone={props.onDone}
    >
      <strong>Copy the {props.what} now:</strong> it is shown this once and cannot be read again.
      {props.children && <> {props.children}</>}
    </ShownOnce>
  )
}

/** A table of the console: its caption for screen readers, the columns' names, the rows. */
export function Table(props: {
  caption: string
  columns: string[]
  className?: string
  children: ReactNode
}) {
  return (
    <table className={props.className}>
      <caption className="visually-hidden">{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th scope="col" key={column}>
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  )
}
