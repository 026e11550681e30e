// Timing comparisons that hold on a busy machine (issue 19). A test that checks that the
// service takes as long for one kind of input as for another (a real address and an
// unknown one, SPEC note 1) must not read the machine's load as a difference between them:
// with four answers of each kind compared by their medians, a laptop doing other work
// showed a 52 ms spread where the service itself makes none. So:
//   - the kinds are interleaved: each round times every kind once, in a new random order,
//     so a slow moment of the machine may fall on any kind and no kind always follows
//     another (the one after a real address would pay for the mail it caused);
//   - each kind is summed up by its lower quartile: load only ever adds time to an
//     answer, so the quicker answers of a kind show what the service does for it, while
//     its median and its mean move with the load.
//   - one round of every kind runs first and is not counted: the first real address loads
//     the mailer and runs code V8 has not compiled yet, a cost of the test's start.
// A difference the service makes (work outside the floor for one kind) moves every answer
// of that kind, its quick ones included, and still shows.

/** Rounds a timing test counts: enough that a quarter of them are quick on a busy machine. */
export const TIMING_ROUNDS = 16

/**
 * Times each kind's `run` once a round, the kinds in a new random order each round, after
 * one round that is not counted.
 */
export async function timeInterleaved<K extends string>(
  kinds: Record<K, () => Promise<void>>,
  options: { rounds: number; between?: () => Promise<void> },
): Promise<Record<K, number[]>> {
  const names = Object.keys(kinds) as K[]
  const took = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
    K,
    number[]
  >
  for (let round = -1; round < options.rounds; round++) {
    for (const name of shuffled(names)) {
      const started = performance.now()
      await kinds[name]()
      if (round >= 0) took[name].push(performance.now() - started)
      // Outside the timing: what one answer left running must not slow the next one.
      await options.between?.()
    }
  }
  return took
}

/** The value a quarter of the way up the sorted samples (interpolated). */
export function lowerQuartile(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (sorted.length - 1) / 4
  const below = Math.floor(at)
  const above = Math.min(below + 1, sorted.length - 1)
  return sorted[below] + (sorted[above] - sorted[below]) * (at - below)
}

/** The largest difference between two kinds' lower quartiles, in ms. */
export function quartileSpread(took: Record<string, number[]>): number {
  const quartiles = Object.values(took).map(lowerQuartile)
  return Math.max(...quartiles) - Math.min(...quartiles)
}

/** The samples rounded to whole ms, for a failure message. */
export function rounded(took: Record<string, number[]>): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(took).map(([k, xs]) => [k, xs.map(Math.round)])),
  )
}

function shuffled<T>(items: T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}
