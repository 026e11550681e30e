// What became of each delivery attempt on this instance, counted for /metrics
// (webhook_deliveries_total): one tally per app, which every worker built on its Deps adds to.

export const DELIVERY_OUTCOMES = ['succeeded', 'retrying', 'failed', 'released'] as const
/**
 * succeeded: a 2xx; retrying: an attempt failed and another is scheduled; failed: the last
 * attempt failed (or the endpoint was disabled), the delivery is Failed; released: the worker
 * stopped during the attempt and gave the delivery back to the queue.
 */
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number]

export class DeliveryOutcomes {
  readonly totals: Record<DeliveryOutcome, number> = {
    succeeded: 0,
    retrying: 0,
    failed: 0,
    released: 0,
  }

  add(outcome: DeliveryOutcome): void {
    this.totals[outcome]++
  }
}
