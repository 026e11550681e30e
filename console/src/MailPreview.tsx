// A mail as the preview route rendered it (CONTRACT §20): its subject, its text part and
// its HTML part drawn in a sandboxed frame. The frame runs nothing (no allow-scripts: no
// script, form, popup or top navigation), and what it shows was sanitized by the service.
// allow-same-origin is there only so that this page may reach into the frame and apply the
// mail's inline styles through the CSSOM (mailWording.ts, framed: the console's CSP,
// which the frame inherits, refuses style attributes). allow-scripts must never join it:
// with both, a script in the frame could lift its own sandbox.
import { useRef, useState } from 'react'
import { framed, type Rendered } from './mailWording.ts'

export function MailPreview({ mail }: { mail: Rendered }) {
  const frame = useRef<HTMLIFrameElement>(null)
  const [height, setHeight] = useState(160)
  const dressed = () => {
    const doc = frame.current?.contentDocument
    if (!doc) return
    for (const el of doc.querySelectorAll<HTMLElement>('[data-mail-style]')) {
      el.style.cssText = el.getAttribute('data-mail-style') ?? ''
    }
    // A link would open inside the frame, where the pages refuse to be shown: here it does
    // nothing (the text part shows where it leads).
    doc.addEventListener('click', (event) => {
      if ((event.target as Element | null)?.closest?.('a')) event.preventDefault()
    })
    setHeight(Math.max(80, doc.documentElement.scrollHeight + 4))
  }
  return (
    <dl className="facts app-facts mail-preview">
      <dt>Subject</dt>
      <dd data-testid="preview-subject">{mail.subject}</dd>
      <dt>Text</dt>
      <dd>
        <pre className="mono mail-text" data-testid="preview-text">
          {mail.text}
        </pre>
      </dd>
      <dt>HTML</dt>
      <dd>
        <iframe
          ref={frame}
          className="mail-frame"
          title="The HTML part of the mail"
          sandbox="allow-same-origin"
          referrerPolicy="no-referrer"
          srcDoc={framed(mail.html)}
          height={height}
          onLoad={dressed}
        />
        <p className="hint">Images are not loaded in the preview; links do nothing here.</p>
      </dd>
    </dl>
  )
}
