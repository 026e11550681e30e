// Bounds how many CPU-heavy jobs run at once and how many may wait, so argon2 never queues
// more work on the thread pool than it can run, and a flood waits here, in a bounded queue,
// instead of thrashing or growing without end.

export class SemaphoreFull extends Error {
  constructor() {
    super('every slot is taken and the queue is full')
  }
}

export class Semaphore {
  private slots: number
  private available: number
  /** Jobs that may wait for a slot; one more is refused with SemaphoreFull. */
  private queueLimit: number
  private readonly waiters: (() => void)[] = []

  constructor(slots: number, queueLimit = Number.POSITIVE_INFINITY) {
    this.slots = slots
    this.available = slots
    this.queueLimit = queueLimit
  }

  /** Changes the bounds; jobs already running or waiting are not disturbed. */
  resize(slots: number, queueLimit: number): void {
    this.available += slots - this.slots
    this.slots = slots
    this.queueLimit = queueLimit
    while (this.available > 0 && this.waiters.length > 0) {
      this.available--
      this.waiters.shift()?.()
    }
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
    else if (this.waiters.length >= this.queueLimit) throw new SemaphoreFull()
    else await new Promise<void>((resolve) => this.waiters.push(resolve))
    try {
      return await job()
    } finally {
      // After a shrink, finished jobs first pay back the slots lent beyond the new bound.
      const next = this.available < 0 ? undefined : this.waiters.shift()
      if (next) next()
      else this.available++
    }
  }
}
