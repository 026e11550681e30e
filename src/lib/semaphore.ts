// Bounds how many CPU-heavy jobs run at once, so argon2 never queues more work on the
// thread pool than there are cores (a login flood then waits here instead of thrashing).

export class Semaphore {
  private readonly slots: number
  private available: number
  private readonly waiters: (() => void)[] = []

  constructor(slots: number) {
    this.slots = slots
    this.available = slots
  }

  /** Jobs holding a slot now. */
  get running(): number {
    return this.slots - this.available
  }

  /** Jobs waiting for a slot. */
  get queued(): number {
    return this.waiters.length
  }

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.available > 0) this.available--
    else await new Promise<void>((resolve) => this.waiters.push(resolve))
    try {
      return await job()
    } finally {
      const next = this.waiters.shift()
      if (next) next()
      else this.available++
    }
  }
}
