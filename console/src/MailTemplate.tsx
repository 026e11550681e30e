// One kind of mail in one language (CONTRACT §20, Mail templates): its subject, text and
// HTML prefilled with the workspace's own wording, else the default one (mailWording.ts);
// the placeholders the kind fills, and which it needs; Preview (the draft rendered with
// sample values, nothing stored), Save (PUT: the API's refusals beside the field they
// name) and Reset to default (DELETE, asked first).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { PLACEHOLDERS } from '../../src/modules/templates/kinds.ts'
import { type Schemas, useConsole } from './api.ts'
import { submitted } from './fields.tsx'
import { MailPreview } from './MailPreview.tsx'
import {
  type Draft,
  KIND_WORDS,
  kindLabel,
  probeDraft,
  samplesOf,
  templateOf,
} from './mailWording.ts'
import {
  ConfirmButton,
  changedFrom,
  described,
  ErrorText,
  FieldError,
  formatDate,
  formErrors,
  localeName,
} from './ui.tsx'

type TemplateList = Schemas['EmailTemplateList']
type Kind = TemplateList['kinds'][number]

const FIELDS = ['subject', 'text', 'html']
const EMPTY: Draft = { subject: '', text: '', html: '' }

/** The tenant's own templates, every kind's placeholders and the locales (GET email-templates). */
export function useMailTemplates() {
  const { session } = useConsole()
  return useQuery({
    queryKey: ['email-templates'],
    queryFn: () => session.api.listEmailTemplates(),
  })
}

export const mailHref = (kind: string, locale?: string) =>
  `#emails?kind=${encodeURIComponent(kind)}${locale ? `&locale=${encodeURIComponent(locale)}` : ''}`

/** What PUT and preview take: no `html` when it is empty (the HTML part is drawn from the text). */
const bodyOf = (draft: Draft) => ({
  subject: draft.subject,
  text: draft.text,
  ...(draft.html.trim() === '' ? {} : { html: draft.html }),
})

export function MailTemplatePage({ kind, locale: asked }: { kind: string; locale?: string }) {
  const { session } = useConsole()
  const queries = useQueryClient()
  const list = useMailTemplates()
  // A role may hold tenant:write without tenant:read: then every locale a template may use.
  const tenant = useQuery({
    queryKey: ['tenant'],
    queryFn: () => session.api.getTenant(),
    retry: false,
  })
  const info = list.data?.kinds.find((k) => k.kind === kind)
  const locale =
    asked ?? tenant.data?.defaultLocale ?? (tenant.isError ? list.data?.locales[0] : undefined)
  const own = list.data?.items.find((t) => t.kind === kind && t.locale === locale)
  const path = { kind, locale } as never

  // The default wording as a template: asked only while the workspace has none of its own.
  const defaults = useQuery({
    queryKey: ['email-templates', kind, locale, 'default'],
    enabled: Boolean(info?.hasDefault && locale && list.data && !own),
    staleTime: Number.POSITIVE_INFINITY,
    queryFn: async () => {
      const allowed = info?.allowed ?? []
      const [probe, mail] = await Promise.all([
        session.api.previewEmailTemplate({ path, body: probeDraft(allowed) }),
        session.api.previewEmailTemplate({ path, body: {} }),
      ])
      return templateOf(mail, samplesOf(allowed, probe))
    },
  })
  const base: Draft | undefined = own
    ? { subject: own.subject, text: own.text, html: own.html ?? '' }
    : info && !info.hasDefault
      ? EMPTY
      : defaults.data
  // The draft follows what is stored: a save (or a reset) starts it afresh from that.
  const baseKey = own ? `own:${own.updatedAt}` : 'default'
  const [edit, setEdit] = useState<{ key: string; draft: Draft } | null>(null)
  const draft = edit?.key === baseKey ? edit.draft : base
  const setDraft = (next: Draft) => setEdit({ key: baseKey, draft: next })

  const listed = (change: (items: TemplateList['items']) => TemplateList['items']) => {
    queries.setQueryData<TemplateList>(['email-templates'], (old) =>
      old ? { ...old, items: change(old.items) } : old,
    )
    void queries.invalidateQueries({ queryKey: ['email-templates'], exact: true })
  }
  const same = (t: { kind: string; locale: string }) => t.kind === kind && t.locale === locale
  // The form shows the refusal of the last action asked (a preview checks as a save does).
  const [last, setLast] = useState<'preview' | 'save'>('save')
  const preview = useMutation({
    mutationFn: (d: Draft) => session.api.previewEmailTemplate({ path, body: bodyOf(d) }),
  })
  const save = useMutation({
    mutationFn: (d: Draft) => session.api.putEmailTemplate({ path, body: bodyOf(d) }),
    onSuccess: ({ template }) => {
      reset.reset()
      listed((items) => [...items.filter((t) => !same(t)), template])
    },
  })
  const reset = useMutation({
    mutationFn: () => session.api.deleteEmailTemplate({ path }),
    onSuccess: () => {
      save.reset()
      preview.reset()
      listed((items) => items.filter((t) => !same(t)))
    },
  })

  if (list.error) return <ErrorText error={list.error} />
  if (!list.data || !locale) return <p role="status">Loading…</p>
  if (!info) {
    return (
      <>
        <p>
          <a href="#emails">All mails</a>
        </p>
        <p>The service sends no mail called “{kind}”.</p>
      </>
    )
  }
  const language = `${localeName(locale)} (${locale})`
  const words = KIND_WORDS[kind]
  const mine = new Set(list.data.items.filter((t) => t.kind === kind).map((t) => t.locale))
  const offered = [...new Set([...(tenant.data?.locales ?? list.data.locales), ...mine, locale])]
  const errors = formErrors(last === 'preview' ? preview.error : save.error, FIELDS)
  const dirty =
    draft !== undefined &&
    base !== undefined &&
    Object.keys(changedFrom({ ...draft }, { ...base })).length > 0
  const submit = submitted(() => {
    if (!draft) return
    setLast('save')
    save.mutate(draft)
  })
  const sanitized =
    save.data && save.variables && save.data.template.html !== (bodyOf(save.variables).html ?? null)
  const previewed = preview.data && preview.variables
  const stale = previewed && draft && JSON.stringify(preview.variables) !== JSON.stringify(draft)
  return (
    <>
      <p>
        <a href="#emails">All mails</a>
      </p>
      <h2>
        {kindLabel(kind)} <code>{kind}</code>
      </h2>
      {words && <p className="hint">{words.does}</p>}
      <div className="toolbar mail-locale">
        <div>
          <label htmlFor="mail-locale">Language</label>
          <select
            id="mail-locale"
            value={locale}
            onChange={(e) => {
              window.location.hash = mailHref(kind, e.target.value)
            }}
          >
            {offered.map((l) => (
              <option key={l} value={l}>
                {localeName(l)} ({l}){mine.has(l) ? ': your own wording' : ''}
              </option>
            ))}
          </select>
        </div>
      </div>
      <p className="hint">
        {own
          ? `Your own wording in ${language}, saved ${formatDate(own.updatedAt)}.`
          : info.hasDefault
            ? `The default wording in ${language}, its sample values turned back into placeholders: change it and save to make it your own.`
            : 'This mail has no default wording to start from yet: write your own here.'}
      </p>
      {!own && info.hasDefault && words?.beyond && <p className="hint">{words.beyond}</p>}
      <Placeholders info={info} />
      <ErrorText error={defaults.error ?? reset.error} />
      {!draft && !defaults.error && <p role="status">Loading…</p>}
      {draft && (
        <form className="settings mail-form" onSubmit={submit} noValidate>
          <ErrorText error={errors.rest} />
          <label htmlFor="mail-subject">Subject</label>
          <input
            id="mail-subject"
            value={draft.subject}
            maxLength={200}
            onChange={(e) => setDraft({ ...draft, subject: e.target.value })}
            {...described('mail-subject-error', errors.of('subject'))}
          />
          <FieldError id="mail-subject-error" messages={errors.of('subject')} />
          <label htmlFor="mail-text">Text</label>
          <p className="hint" id="mail-text-hint">
            The plain-text part, which every mail has.
            {info.required.length > 0 &&
              ` It must hold ${info.required.map((p) => `{{${p}}}`).join(' and ')}.`}
          </p>
          <textarea
            id="mail-text"
            className="mono"
            rows={10}
            maxLength={16 * 1024}
            value={draft.text}
            onChange={(e) => setDraft({ ...draft, text: e.target.value })}
            {...described('mail-text-error', errors.of('text'), 'mail-text-hint')}
          />
          <FieldError id="mail-text-error" messages={errors.of('text')} />
          <label htmlFor="mail-html">HTML (optional)</label>
          <p className="hint" id="mail-html-hint">
            Left empty, the HTML part is drawn from the text: a paragraph per blank line,{' '}
            {'{{link}}'} as a link. When given, it must hold what the text must. Scripts, event
            handlers, javascript: links and forms are removed when it is saved.
          </p>
          <textarea
            id="mail-html"
            className="mono"
            rows={10}
            maxLength={32 * 1024}
            value={draft.html}
            onChange={(e) => setDraft({ ...draft, html: e.target.value })}
            {...described('mail-html-error', errors.of('html'), 'mail-html-hint')}
          />
          <FieldError id="mail-html-error" messages={errors.of('html')} />
          <div className="actions">
            <button
              type="button"
              disabled={preview.isPending}
              onClick={() => {
                setLast('preview')
                preview.mutate(draft)
              }}
            >
              Preview
            </button>
            <button type="submit" className="primary" disabled={save.isPending}>
              Save
            </button>
            {own && (
              <ConfirmButton
                label="Reset to default"
                danger
                confirm={`Delete your own wording in ${language}? The default is sent again.`}
                onConfirm={() => reset.mutate()}
              />
            )}
          </div>
          {dirty && <p className="hint">Unsaved changes.</p>}
          {save.isSuccess && !dirty && (
            <p role="status">
              Saved: {kindLabel(kind)} mails in {language} now go out in this wording.
              {sanitized && ' The HTML was sanitized: it is shown above as it was stored.'}
            </p>
          )}
          {reset.isSuccess && (
            <p role="status">
              Reset: {kindLabel(kind)} mails in {language} go out in the default wording again.
            </p>
          )}
        </form>
      )}
      {previewed && (
        <section aria-labelledby="mail-preview-h">
          <h2 id="mail-preview-h">Preview</h2>
          <p className="hint">
            The draft as a recipient would get it, with sample values; the workspace’s colour and
            links are added to every mail when it is sent.
            {stale && ' The draft has changed since: preview it again to see the change.'}
          </p>
          <MailPreview mail={preview.data} />
        </section>
      )}
    </>
  )
}

function Placeholders({ info }: { info: Kind }) {
  return (
    <section aria-labelledby="mail-placeholders-h">
      <h2 id="mail-placeholders-h">Placeholders</h2>
      <p className="hint">
        Written in double braces; each is filled in for the recipient (escaped in the HTML). No
        other placeholder is taken.
      </p>
      <ul className="placeholders">
        {info.allowed.map((name) => (
          <li key={name}>
            <code>{`{{${name}}}`}</code>{' '}
            {info.required.includes(name) && <span className="badge">required</span>}{' '}
            {PLACEHOLDERS[name as keyof typeof PLACEHOLDERS] ?? ''}
          </li>
        ))}
      </ul>
    </section>
  )
}
