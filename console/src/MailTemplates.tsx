// Mail templates (CONTRACT §20, issue 31): every kind of mail the service sends for the
// workspace, what it is for and the languages it has the workspace's own wording in; a mail
// without one is sent in the default wording of its language. #emails?kind=<kind> opens a
// mail's editor (MailTemplate.tsx), &locale=<locale> in that language.
import { MailTemplatePage, mailHref, useMailTemplates } from './MailTemplate.tsx'
import { KIND_WORDS, kindLabel } from './mailWording.ts'
import { ErrorText, hashQuery, localeName, Table } from './ui.tsx'

export function MailTemplates() {
  const query = hashQuery()
  const kind = query.get('kind')
  return kind ? (
    <MailTemplatePage kind={kind} locale={query.get('locale') ?? undefined} />
  ) : (
    <MailTemplateList />
  )
}

function MailTemplateList() {
  const list = useMailTemplates()
  const data = list.data
  return (
    <>
      <p className="hint intro">
        The mails the service sends for this workspace. Each goes out in the recipient’s language,
        in the default wording unless you write your own for that language. Choose a mail to word
        it, preview it with sample values, or go back to the default.
      </p>
      <ErrorText error={list.error} />
      {!data && !list.error && <p role="status">Loading…</p>}
      {data && (
        <Table
          className="cards mail-kinds"
          caption="Mails"
          columns={['Mail', 'What it is for', 'Your own wording']}
        >
          {data.kinds.map(({ kind }) => {
            const own = data.items.filter((t) => t.kind === kind).map((t) => t.locale)
            return (
              <tr key={kind}>
                <td data-label="Mail">
                  {/* One block: on a phone the cell is a grid of its label and one value. */}
                  <div>
                    <a href={mailHref(kind)}>{kindLabel(kind)}</a>
                    <div className="hint">
                      <code>{kind}</code>
                    </div>
                  </div>
                </td>
                <td data-label="What it is for" className="long">
                  {KIND_WORDS[kind]?.does}
                </td>
                <td data-label="Your own wording" className="long">
                  {own.length === 0
                    ? 'None: the default wording'
                    : own.map((l) => `${localeName(l)} (${l})`).join(', ')}
                </td>
              </tr>
            )
          })}
        </Table>
      )}
    </>
  )
}
