// Reads of oidc_models made ahead within one request to a Provider (queries.ts): finding an
// authorization code or a refresh token also reads, in the same statement, the grant and
// the provider session oidc-provider looks up right after it, and leaves them here for
// those two finds. The memo lives only as long as its request (a Koa middleware of each
// Provider opens it, provider.ts), each entry answers one find only, and every write to
// oidc_models in the request empties it, so nothing read here outlives a revocation or
// is seen by another request. Outside a request (the hosted pages' calls) nothing is kept.
import { AsyncLocalStorage } from 'node:async_hooks'

export type Memo = Map<string, Record<string, unknown> | undefined>

const scope = new AsyncLocalStorage<Memo>()

/** The Koa middleware that gives each request to a Provider its own memo. */
export function requestMemo(_ctx: unknown, next: () => Promise<void>): Promise<void> {
  return scope.run(new Map(), next)
}

/** The current request's memo; undefined outside a request to a Provider. */
export function currentMemo(): Memo | undefined {
  return scope.getStore()
}

/** The entry left for this find, removed as it is taken; `found` false when none. */
export function take(key: string): { found: boolean; value?: Record<string, unknown> } {
  const memo = scope.getStore()
  if (!memo?.has(key)) return { found: false }
  const value = memo.get(key)
  memo.delete(key)
  return { found: true, value }
}

/** A write to oidc_models: what was read ahead may no longer be so. */
export function forgetAll(): void {
  scope.getStore()?.clear()
}
