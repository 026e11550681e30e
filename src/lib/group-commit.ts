// Writes that need not hold up the work that makes them, in batches (group commit): the
// first item starts a write at once, and every item added while that write runs goes in the
// next one, so a busy instance makes one statement per round trip rather than one per item,
// and never more than one at a time. A failed batch is handed to `onError` and dropped: use
// it only for records whose loss costs a line of history (a webhook delivery's success,
// sent again if lost; a hook call's outcome), never for what a caller was promised.

export class GroupCommit<T> {
  private readonly write: (batch: T[]) => Promise<void>
  private readonly onError: (error: unknown) => void
  private queue: T[] = []
  private running: Promise<void> | undefined

  constructor(write: (batch: T[]) => Promise<void>, onError: (error: unknown) => void) {
    this.write = write
    this.onError = onError
  }

  add(item: T): void {
    this.queue.push(item)
    this.running ??= this.drain()
  }

  private async drain() {
    while (this.queue.length > 0) {
      const batch = this.queue
      this.queue = []
      await this.write(batch).catch(this.onError)
    }
    this.running = undefined
  }

  /** Resolves once every item added so far is written (or its batch failed). */
  async flushed(): Promise<void> {
    while (this.running) await this.running
  }
}
