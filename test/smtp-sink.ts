// A real SMTP server on loopback that keeps every message it receives, parsed by
// mailparser, so tests read mailed codes and tokens the way a user would.
import type { AddressInfo } from 'node:net'
import { type ParsedMail, simpleParser } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string
  subject: string
  text: string
  html: string
}

// Not inside a word: a random address such as de-128387e6@example.com holds six digits too.
const SIX_DIGITS = /(?<![\w@.-])(\d{6})(?![\w@-]|\.\w)/

export class SmtpSink {
  readonly messages: ReceivedMail[] = []
  private server: SMTPServer | undefined
  private waiters: (() => void)[] = []
  url = ''

  async start(): Promise<this> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, _session, callback) => {
        simpleParser(stream)
          .then((mail: ParsedMail) => {
            const to = Array.isArray(mail.to) ? mail.to[0] : mail.to
            this.messages.push({
              to: (to?.value[0]?.address ?? '').toLowerCase(),
              subject: mail.subject ?? '',
              text: mail.text ?? '',
              html: typeof mail.html === 'string' ? mail.html : '',
            })
            for (const wake of this.waiters.splice(0)) wake()
            callback()
          })
          .catch(callback)
      },
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    const { port } = this.server.server.address() as AddressInfo
    this.url = `smtp://127.0.0.1:${port}`
    return this
  }

  /** Messages to one address (lower-cased), oldest first. */
  to(address: string): ReceivedMail[] {
    return this.messages.filter((m) => m.to === address.toLowerCase())
  }

  /** Waits until `count` messages reached `address`, and answers the newest. */
  async waitFor(address: string, count = 1, ms = 5000): Promise<ReceivedMail> {
    const until = Date.now() + ms
    while (this.to(address).length < count) {
      if (Date.now() > until) throw new Error(`no mail #${count} for ${address} within ${ms} ms`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
    const all = this.to(address)
    return all[all.length - 1]
  }

  /**
   * The code of the first message to `address` after its first `after` messages that holds
   * one, waiting for it. Security alerts (which never hold a code, CONTRACT §9) are mailed in
   * the background and may land before or after a code mail; counting messages would then
   * read the alert, so this looks for the code instead.
   */
  async codeAfter(address: string, after: number, ms = 5000): Promise<string> {
    const until = Date.now() + ms
    for (;;) {
      const mail = this.to(address)
        .slice(after)
        .find((m) => SIX_DIGITS.test(m.text))
      if (mail) return SmtpSink.code(mail)
      if (Date.now() > until) throw new Error(`no code for ${address} within ${ms} ms`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
    }
  }

  /** The first standalone 6-digit number of a message's text part. */
  static code(mail: ReceivedMail): string {
    const match = SIX_DIGITS.exec(mail.text)
    if (!match) throw new Error(`no code in mail: ${mail.text}`)
    return match[1]
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()))
  }
}
