// Outgoing mail over SMTP (SMTP_URL). Without SMTP, in development only, each message is
// written to the log instead. Mail is sent in the background: a slow or failing mail
// server never delays a response, and so never tells a caller whether an account exists.
import type { Transporter } from 'nodemailer'

export interface Mail {
  to: string
  subject: string
  text: string
  html: string
  /**
   * Which tenant template may replace the wording (CONTRACT §20; set by
   * modules/templates/seam.ts, read by the resolver the mailer was given); never sent.
   */
  template?: MailTemplateChoice
}

export interface MailTemplateChoice {
  tenantId: string
  kind: string
  locale: string
  values: Record<string, string | undefined>
}

/** The mail to send instead of `mail` (its tenant's template), or `mail` itself. */
export type TemplateResolver = (mail: Mail & { template: MailTemplateChoice }) => Promise<Mail>

export interface MailLog {
  info(obj: object, msg: string): void
  error(obj: object, msg: string): void
}

export class Mailer {
  /** Made by the first message: nodemailer is loaded only when mail is sent over SMTP. */
  private transport: Promise<Transporter> | undefined
  private readonly smtpUrl: string | undefined
  private readonly from: string
  private readonly log: MailLog
  private readonly pending = new Set<Promise<void>>()
  private readonly templates: TemplateResolver | undefined

  constructor(options: {
    smtpUrl: string | undefined
    from: string
    log: MailLog
    templates?: TemplateResolver
  }) {
    this.smtpUrl = options.smtpUrl
    this.from = options.from
    this.log = options.log
    this.templates = options.templates
  }

  /**
   * Queues a message and returns at once. With `afterAnswer`, its sending begins only once
   * the current request's answer is written (setImmediate runs after the reply's write), yet
   * it counts as in flight from now on (`drain`).
   */
  deliver(mail: Mail, options: { afterAnswer?: boolean } = {}): void {
    const started = options.afterAnswer
      ? new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.send(mail))
      : this.send(mail)
    const job = started.finally(() => this.pending.delete(job))
    this.pending.add(job)
  }

  /** Waits for messages in flight (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.pending])
  }

  /**
   * The tenant's template in place of the default wording, read here, in the background,
   * so no request waits for it; when it cannot be read the default goes out.
   */
  private async worded(mail: Mail): Promise<Mail> {
    const { template, ...plain } = mail
    if (!template || !this.templates) return plain
    try {
      const { template: _, ...chosen } = await this.templates({ ...plain, template })
      return chosen
    } catch (error) {
      this.log.error(
        { err: (error as Error).message, kind: template.kind },
        'mail template unavailable; the default wording is sent',
      )
      return plain
    }
  }

  private async send(original: Mail): Promise<void> {
    const mail = await this.worded(original)
    if (!this.smtpUrl) {
      // Development without SMTP_URL: the message goes to the log (CONTRACT §1).
      this.log.info(
        { mail: { to: mail.to, subject: mail.subject, text: mail.text } },
        'mail (no SMTP_URL)',
      )
      return
    }
    try {
      this.transport ??= import('nodemailer').then(({ default: nodemailer }) =>
        nodemailer.createTransport(this.smtpUrl),
      )
      await (await this.transport).sendMail({ from: this.from, ...mail })
    } catch (error) {
      this.log.error(
        { err: (error as Error).message, subject: mail.subject },
        'mail delivery failed',
      )
    }
  }
}

/** Escapes text for an HTML mail body. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
