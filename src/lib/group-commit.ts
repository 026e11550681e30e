// Writes that need not hold up the work that makes them, in batches (group commit): a write
// takes every item queued so far, and the items added while it runs go in the next one, so
// a busy instance makes one statement per round trip rather than one per item, and never
// more than one at a time. With `delayMs` the first item of a batch waits that long for
// others (a write a second, say, however many items), unless `flushed()` is asked. A failed
// batch is handed to `onError` and dropped: use it only for records whose loss costs a line
// of history (a webhook delivery's success, sent again if lost; a hook call's outcome),
// never for what a caller was promised.

export class GroupCommit<T> {
  private readonly write: (batch: T[]) => Promise<void>
  private readonly onError: (error: unknown) => void
  private readonly delayMs: number
  private queue: T[] = []
  private running: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined

  constructor(
    write: (batch: T[]) => Promise<void>,
    onError: (error: unknown) => void,
    options: { delayMs?: number } = {},
  ) {
    this.write = write
    this.onError = onError
    this.delayMs = options.delayMs ?? 0
  }

  add(item: T): void {
    this.queue.push(item)
    this.schedule()
  }

  /** Starts the next write now, or after the delay; nothing while one runs or waits. */
  private schedule() {
    if (this.running || this.timer || this.queue.length === 0) return
    if (this.delayMs === 0) return this.start()
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.start()
    }, this.delayMs)
    // A batch waiting for its delay keeps no process alive (a close writes it: flushed()).
    this.timer.unref()
  }

  private start() {
    this.running = this.writeQueued()
  }

  private async writeQueued() {
    const batch = this.queue
    this.queue = []
    await this.write(batch).catch(this.onError)
    this.running = undefined
    this.schedule()
  }

  /**
   * Resolves once every item added so far is written (or its batch failed), at once: it
   * waits for the write under way and for the one holding what is queued now, never for
   * items added after the call (so a busy instance cannot keep it waiting).
   */
  async flushed(): Promise<void> {
    if (this.running) await this.running
    if (this.timer) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    // The items queued now: written by the write under way's successor, or started here.
    if (this.running) await this.running
    if (this.queue.length > 0 && !this.running) this.start()
    if (this.running) await this.running
  }
}
