// A signed-in user's session in a browser or an app: the token envelope in a pluggable
// store, a fetch that sends the access token and renews it, and the sign-in calls that
// start a session. Modelled on supabase/auth-js's GoTrueClient.
//
// A refresh token is single use, and presenting a spent one revokes the whole session
// (CONTRACT §4, refresh-token reuse). So refreshes never overlap: in one page, every
// caller shares one in-flight refresh (single flight); across tabs sharing a store, the
// refresh runs under a Web Lock, and whoever gets the lock second finds the envelope the
// first one stored and uses it instead of spending the old refresh token again.
import { type Client, createClient, type FetchLike } from './client.ts'
import { AuthServiceError } from './errors.ts'
import type { components } from './generated/openapi.ts'
import type { OperationArgs, OperationInput } from './operations.ts'
import { memoryStore, type SessionStore } from './stores.ts'

export type TokenEnvelope = components['schemas']['TokenEnvelope']

/**
 * What signup answers instead of a session where the workspace requires a verified
 * address: a code was mailed; `verifyEmail({ email, code })` then signs in.
 */
export type VerificationRequired = components['schemas']['VerificationRequired']

/** The stored session: the envelope and when its access token expires (ms since the epoch). */
export interface Session extends TokenEnvelope {
  expiresAt: number
}

export interface SessionClientOptions {
  baseUrl: string
  tenant: string
  /** Where the envelope is kept (default: memory; `localStorageStore()` to share it across tabs). */
  store?: SessionStore
  /** The store key (default `tenant-auth:session:<tenant>`). */
  storageKey?: string
  /** Refresh this many seconds before the access token expires (default 30). */
  refreshLeewaySeconds?: number
  fetch?: FetchLike
  /** The current time in ms (tests). */
  now?: () => number
}

/** The Web Locks API, as far as it is used here. */
interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>
  request<T>(
    name: string,
    options: { ifAvailable: true },
    callback: (lock: unknown) => Promise<T>,
  ): Promise<T>
}

/** How long a tab that waited for another's refresh waits to see its tokens stored. */
const SETTLE_MS = 3000

export interface SessionClient {
  /** Calls that take a password or a code and start a session (stored, then returned). */
  login(body: OperationInput<'login'>['body']): Promise<Session>
  /**
   * A session, or `{ ok: true, verificationRequired: true }` (nothing stored) where the
   * workspace requires a verified address: finish with `verifyEmail({ email, code })`.
   */
  signup(body: OperationInput<'signup'>['body']): Promise<Session | VerificationRequired>
  verifyLoginCode(body: OperationInput<'verifyLoginCode'>['body']): Promise<Session>
  /** Sets a new password with a mailed reset code; every other session of the user ends. */
  resetPassword(body: OperationInput<'resetPassword'>['body']): Promise<Session>
  /** Signs in with a mailed verification code (`{ email, code }`), proving the address. */
  verifyEmail(body: OperationInput<'verifyEmail'>['body'] & { email: string }): Promise<Session>
  initialVerifyTotp(body: OperationInput<'initialVerifyTotp'>['body']): Promise<Session>
  acceptInvite(body: OperationInput<'acceptInvite'>['body']): Promise<Session>
  finishIdpSignIn(query: OperationInput<'finishIdpSignIn'>['query']): Promise<Session>
  /** Public calls that do not start a session. */
  requestLoginCode(
    ...args: OperationArgs<'requestLoginCode'>
  ): ReturnType<Client['requestLoginCode']>
  requestEmailOtp(...args: OperationArgs<'requestEmailOtp'>): ReturnType<Client['requestEmailOtp']>
  requestPasswordReset(
    ...args: OperationArgs<'requestPasswordReset'>
  ): ReturnType<Client['requestPasswordReset']>
  /** Without a token: `{ body: { email } }`. Signed in, use `api.requestEmailVerification`. */
  requestEmailVerification(
    ...args: OperationArgs<'requestEmailVerification'>
  ): ReturnType<Client['requestEmailVerification']>
  getAuthConfig(...args: OperationArgs<'getAuthConfig'>): ReturnType<Client['getAuthConfig']>
  /** Stores an envelope obtained elsewhere (tenant creation, a server-side sign-in). */
  setSession(envelope: TokenEnvelope): Promise<Session>
  /** The stored session as it is, or null when signed out. */
  getSession(): Promise<Session | null>
  /** A valid access token (refreshed first when it is about to expire), or null when signed out. */
  getAccessToken(): Promise<string | null>
  /**
   * Exchanges the refresh token now (shared with any refresh already under way, and
   * skipped when another tab has just done it: its tokens are returned).
   */
  refresh(): Promise<Session | null>
  /** Ends this session at the service and forgets it (forgotten even if the service is unreachable). */
  logout(): Promise<void>
  /** Ends every session of the user, then forgets this one. */
  logoutAll(): Promise<void>
  /**
   * fetch with the access token: refreshes shortly before expiry, and once on a
   * 401 `token_expired`, then repeats the request. A path starting with `/` is taken
   * relative to baseUrl. A streamed body cannot be repeated: send strings or buffers.
   */
  fetch: FetchLike
  /** Every operation, authenticated as the signed-in user through `fetch`. */
  api: Client
}

export function createSessionClient(options: SessionClientOptions): SessionClient {
  const store = options.store ?? memoryStore()
  const key = options.storageKey ?? `tenant-auth:session:${options.tenant}`
  const leewayMs = (options.refreshLeewaySeconds ?? 30) * 1000
  const now = options.now ?? Date.now
  const baseFetch: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const plain = createClient({ baseUrl: options.baseUrl, tenant: options.tenant, fetch: baseFetch })
  let inflight: Promise<Session | null> | null = null

  async function load(): Promise<Session | null> {
    const raw = await store.get(key)
    if (!raw) return null
    try {
      return JSON.parse(raw) as Session
    } catch {
      return null
    }
  }

  async function save(envelope: TokenEnvelope): Promise<Session> {
    const session: Session = {
      ...envelope,
      expiresAt: now() + envelope.accessTokenExpiresIn * 1000,
    }
    await store.set(key, JSON.stringify(session))
    return session
  }

  const fresh = (s: Session) => s.expiresAt - leewayMs > now()

  /**
   * The stored session once it no longer holds `stale`, or as it is after SETTLE_MS.
   * Another tab's write to localStorage reaches this tab's copy a moment later (Chromium
   * keeps one per renderer process and syncs them asynchronously), so a tab that waited for
   * the lock may at first still read the tokens the other tab just spent.
   */
  async function settled(stale: string): Promise<Session | null> {
    const until = now() + SETTLE_MS
    for (;;) {
      const current = await load()
      if (!current || current.accessToken !== stale || now() >= until) return current
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  /**
   * Spends the refresh token unless someone else already replaced `stale` (another tab).
   * `waited`: another tab held the refresh lock first, so it was rotating them.
   */
  async function rotate(stale: string, waited: boolean): Promise<Session | null> {
    const current = waited ? await settled(stale) : await load()
    if (!current) return null
    if (current.accessToken !== stale && fresh(current)) return current
    try {
      return await save(
        await plain.refreshSession({ body: { refreshToken: current.refreshToken } }),
      )
    } catch (error) {
      // Reused, revoked, expired or unknown: the session is over. Not a network failure.
      if (error instanceof AuthServiceError && error.status === 401) {
        const latest = await load()
        if (latest?.refreshToken === current.refreshToken) await store.remove(key)
      }
      throw error
    }
  }

  /** Runs `run` holding the tenant's refresh lock across tabs; says whether it had to wait. */
  async function withLock<T>(run: (waited: boolean) => Promise<T>): Promise<T> {
    const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks
    if (!locks) return run(false)
    const name = `tenant-auth-refresh:${options.tenant}`
    const busy = Symbol('busy')
    const first = await locks.request(name, { ifAvailable: true }, async (lock) =>
      lock ? run(false) : busy,
    )
    return first === busy ? locks.request(name, () => run(true)) : (first as T)
  }

  /** One refresh at a time in this client: later callers get the promise of the first. */
  function refreshOnce(stale: string): Promise<Session | null> {
    inflight ??= (async () => {
      try {
        return await withLock((waited) => rotate(stale, waited))
      } finally {
        inflight = null
      }
    })()
    return inflight
  }

  async function validSession(): Promise<Session | null> {
    const session = await load()
    if (!session) return null
    return fresh(session) ? session : refreshOnce(session.accessToken)
  }

  function withToken(input: string | URL | Request, init: RequestInit | undefined, token: string) {
    const target =
      typeof input === 'string' && input.startsWith('/')
        ? new URL(input, options.baseUrl).toString()
        : input
    if (target instanceof Request) {
      // A clone each time, so the original can be sent again after a refresh.
      const request = new Request(target.clone(), init)
      request.headers.set('authorization', `Bearer ${token}`)
      return baseFetch(request)
    }
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    return baseFetch(target, { ...init, headers })
  }

  const authedFetch: FetchLike = async (input, init) => {
    const session = await validSession()
    if (!session) throw notSignedIn()
    const res = await withToken(input, init, session.accessToken)
    if (res.status !== 401 || (await reasonOf(res)) !== 'token_expired') return res
    const renewed = await refreshOnce(session.accessToken)
    if (!renewed) return res
    return withToken(input, init, renewed.accessToken)
  }

  const start = async (envelope: Promise<TokenEnvelope>) => save(await envelope)

  return {
    login: (body) => start(plain.login({ body })),
    signup: async (body) => {
      const answer = await plain.signup({ body })
      return 'accessToken' in answer ? save(answer) : answer
    },
    verifyLoginCode: (body) => start(plain.verifyLoginCode({ body })),
    resetPassword: (body) => start(plain.resetPassword({ body })),
    verifyEmail: async (body) => {
      const answer = await plain.verifyEmail({ body })
      // Without a token the service answers a token envelope; the user record means a
      // token was sent, which this client never does here.
      if (!('accessToken' in answer)) throw new TypeError('verifyEmail: no session answered')
      return save(answer)
    },
    initialVerifyTotp: (body) => start(plain.initialVerifyTotp({ body })),
    acceptInvite: (body) => start(plain.acceptInvite({ body })),
    finishIdpSignIn: (query) => start(plain.finishIdpSignIn({ query })),
    requestLoginCode: (...args) => plain.requestLoginCode(...args),
    requestEmailOtp: (...args) => plain.requestEmailOtp(...args),
    requestPasswordReset: (...args) => plain.requestPasswordReset(...args),
    requestEmailVerification: (...args) => plain.requestEmailVerification(...args),
    getAuthConfig: (...args) => plain.getAuthConfig(...args),
    setSession: save,
    getSession: load,
    getAccessToken: async () => (await validSession())?.accessToken ?? null,
    // Forced, but still a no-op when another tab rotated the tokens since we last looked:
    // the replaced access token is what tells rotate() so.
    refresh: async () => {
      const session = await load()
      return session ? refreshOnce(session.accessToken) : null
    },
    async logout() {
      const session = await load()
      await store.remove(key)
      if (session) await plain.logout({ body: { refreshToken: session.refreshToken } })
    },
    async logoutAll() {
      const session = await validSession()
      if (!session) return
      try {
        await plain.logoutAll({ token: session.accessToken })
      } finally {
        await store.remove(key)
      }
    },
    fetch: authedFetch,
    api: createClient({ baseUrl: options.baseUrl, tenant: options.tenant, fetch: authedFetch }),
  }
}

async function reasonOf(res: Response): Promise<string | undefined> {
  try {
    const body = (await res.clone().json()) as { details?: { reason?: unknown } }
    return typeof body.details?.reason === 'string' ? body.details.reason : undefined
  } catch {
    return undefined
  }
}

function notSignedIn() {
  return new AuthServiceError({
    status: 401,
    code: 'UNAUTHORIZED',
    message: 'Not signed in.',
    details: { reason: 'not_signed_in' },
  })
}
