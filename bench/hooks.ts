// The hooks' figures of `npm run bench` (issue 32, CONTRACT §21): a receiver of blocking
// hooks that answers each call after `delayMs` (1 ms: the issue's "a hook answering in
// 1 ms") with a fixed JSON body, and the breached-password check of the shipped list timed
// in this process (the check a sign-up pays before its hash).
import { randomBytes } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { BreachedPasswords } from '../src/lib/breached.ts'

export class HookReceiver {
  private server: Server | undefined
  count = 0
  answer: unknown = { decision: 'allow' }

  private readonly delayMs: number

  constructor(delayMs = 1) {
    this.delayMs = delayMs
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        this.count++
        const body = JSON.stringify(this.answer)
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' }).end(body)
        }, this.delayMs)
      })
    })
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }

  close(): void {
    this.server?.closeAllConnections()
    this.server?.close()
  }
}

/**
 * The shipped-list check of `count` fresh strong passwords (none in the list, so each is
 * the whole lookup a sign-up pays), one at a time: microseconds per check, median and p99.
 */
export async function breachedCheckMicros(count = 20_000) {
  const breached = new BreachedPasswords({})
  const samples: number[] = []
  for (let i = 0; i < count; i++) {
    const password = `${randomBytes(9).toString('base64url')}-Plum-${i}`
    const t0 = process.hrtime.bigint()
    if (await breached.isBreached(password)) throw new Error('a random password in the list')
    samples.push(Number(process.hrtime.bigint() - t0) / 1000)
  }
  samples.sort((a, b) => a - b)
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]
  return { checks: count, medianUs: at(0.5), p99Us: at(0.99), targetUs: 1000 }
}
