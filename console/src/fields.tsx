// The pieces every form of the console is made of: the props a record's form takes (and a
// mutation as those props), its submit handler, a text field with its label, hint and the
// API's messages (and what ties it to the form's draft), a checkbox with its label, and the
// submit button.
import type { FormEvent, InputHTMLAttributes, ReactNode, TextareaHTMLAttributes } from 'react'
import { described, FieldError, type FormErrors } from './ui.tsx'

/** What a form for creating (no `initial`) or editing a record takes. */
export interface FormProps<T> {
  initial?: T
  submitLabel: string
  pending: boolean
  error: unknown
  onSubmit(body: Record<string, unknown>): void
}

/** A mutation as a form's props: pending while it runs, its error, and a submit runs it. */
export function formOf(mutation: {
  isPending: boolean
  error: unknown
  mutate(body: Record<string, unknown>): void
}): Pick<FormProps<never>, 'pending' | 'error' | 'onSubmit'> {
  return {
    pending: mutation.isPending,
    error: mutation.error,
    onSubmit: (body) => mutation.mutate(body),
  }
}

/** A form's submit handler: the browser does not send the form, `act` does what it is for. */
export const submitted = (act: () => void) => (event: FormEvent) => {
  event.preventDefault()
  act()
}

type TextKey<D> = { [K in keyof D]: D[K] extends string ? K : never }[keyof D] & string

/**
 * What ties a TextField to the text field `key` of a form's draft: its id (`{prefix}-{key}`),
 * value and change, and the API's messages at `path` (the key itself by default).
 */
export function fieldsOf<D>(
  prefix: string,
  draft: D,
  set: <K extends keyof D>(key: K, value: D[K]) => void,
  errors: FormErrors,
) {
  return <K extends TextKey<D>>(key: K, path: string = key) => ({
    id: `${prefix}-${key}`,
    value: draft[key] as string,
    onChange: (value: string) => set(key, value as D[K]),
    messages: errors.of(path),
  })
}

type Attributes = Omit<
  InputHTMLAttributes<HTMLInputElement> & TextareaHTMLAttributes<HTMLTextAreaElement>,
  'id' | 'value' | 'onChange' | 'children'
>

/**
 * A text input (a textarea, given `rows`) with its label, its hint (`hint`, shown above it,
 * or `hintId`, one shown elsewhere for several fields) and the API's messages beside it,
 * which it names in aria-describedby. Its hint is `{id}-hint`, its messages `{id}-error`.
 */
export function TextField(
  props: Attributes & {
    id: string
    label: ReactNode
    hint?: ReactNode
    hintId?: string
    value: string
    onChange(value: string): void
    /** The API's messages about it; none in a form the API does not check field by field. */
    messages?: string[]
  },
) {
  const { id, label, hint, hintId, value, onChange, messages = [], rows, ...attributes } = props
  const hinted = hint ? `${id}-hint` : hintId
  const field = {
    ...attributes,
    id,
    value,
    ...described(`${id}-error`, messages, hinted),
  }
  return (
    <>
      <label htmlFor={id}>{label}</label>
      {hint && (
        <p className="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {rows ? (
        <textarea rows={rows} {...field} onChange={(e) => onChange(e.target.value)} />
      ) : (
        <input {...field} onChange={(e) => onChange(e.target.value)} />
      )}
      <FieldError id={`${id}-error`} messages={messages} />
    </>
  )
}

/** A checkbox (or, given `name`, a radio button of that group) and its label. */
export function Check(props: {
  id: string
  checked: boolean
  onChange(checked: boolean): void
  label: ReactNode
  name?: string
  disabled?: boolean
  describedBy?: string
  /** A class beside `check` (`permission`: a label of two lines). */
  className?: string
}) {
  return (
    <div className={props.className ? `check ${props.className}` : 'check'}>
      <input
        type={props.name ? 'radio' : 'checkbox'}
        id={props.id}
        name={props.name}
        checked={props.checked}
        disabled={props.disabled}
        onChange={(e) => props.onChange(e.target.checked)}
        aria-describedby={props.describedBy}
      />
      <label htmlFor={props.id}>{props.label}</label>
    </div>
  )
}

/** The form's submit button, disabled while its request runs. */
export function SubmitButton(props: { label: string; pending: boolean }) {
  return (
    <button type="submit" className="primary" disabled={props.pending}>
      {props.label}
    </button>
  )
}
