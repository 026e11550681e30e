// Work that must wait for a transaction's commit (tell the revocation cache, count a sign-in,
// mail an alert) and must never run when it rolls back: `afterCommit(handle, work)`. Inside
// a transaction the work waits for its COMMIT (an inner transaction's, a savepoint's, joins
// the outer one's, and is dropped with the savepoint if that rolls back); outside one the
// statement has already committed, so the work runs at once. `trackCommits` installs this
// on the service's Db once (buildApp): every `db.transaction` then keeps its list.
import type { Db, Handle } from './client.ts'

type Work = () => void
type TransactionFn = (work: (tx: Handle) => Promise<unknown>, config?: unknown) => Promise<unknown>

/** The work waiting for each open transaction (and savepoint) handle. */
const waiting = new WeakMap<object, Work[]>()
const TRACKED = Symbol('tracks commits')

/** Told of a failure of after-commit work (it never fails the request that committed). */
export const afterCommitErrors: { onError?: (error: unknown) => void } = {}

/** Runs `work` once `handle`'s transaction commits; at once for a handle outside one. */
export function afterCommit(handle: Handle, work: Work): void {
  const list = waiting.get(handle)
  if (list) list.push(work)
  else run([work])
}

/** Makes every transaction of `db` (and each savepoint inside one) keep after-commit work. */
export function trackCommits(db: Db): void {
  const target = db as unknown as { transaction: TransactionFn; [TRACKED]?: true }
  if (target[TRACKED]) return
  target[TRACKED] = true
  target.transaction = wrap(target.transaction.bind(db), undefined)
}

function wrap(transaction: TransactionFn, parent: Work[] | undefined): TransactionFn {
  return async (work, config) => {
    const list: Work[] = []
    const result = await transaction(async (tx) => {
      waiting.set(tx, list)
      const nested = tx as unknown as { transaction: TransactionFn }
      nested.transaction = wrap(nested.transaction.bind(tx), list)
      return work(tx)
    }, config)
    // A savepoint's work waits for the outer commit; the outermost transaction runs it now.
    if (parent) parent.push(...list)
    else run(list)
    return result
  }
}

function run(list: Work[]): void {
  for (const work of list) {
    try {
      work()
    } catch (error) {
      afterCommitErrors.onError?.(error)
    }
  }
}
