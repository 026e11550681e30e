// Time comes from one injectable clock so that expiry rules are tested without sleeping.

export interface Clock {
  now(): Date
}

export const systemClock: Clock = { now: () => new Date() }

/** A clock for tests: starts at the real time and moves only when told. */
export class ManualClock implements Clock {
  private ms: number
  constructor(start: Date = new Date()) {
    this.ms = start.getTime()
  }
  now(): Date {
    return new Date(this.ms)
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000
  }
}
