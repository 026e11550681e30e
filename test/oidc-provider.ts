// A real OpenID provider (panva/oidc-provider) on loopback, for the hosted sign-in tests.
// Clients are registered at run time (each test tenant has its own redirect URI), the
// login and consent interaction is finished programmatically as the account the test
// chooses, and `authorize()` plays the browser: it follows the redirects with its own
// cookie jar and answers the URL the provider sends the user back to.
//
// For the ID-token checks, `tamperIdToken` rewrites the id_token of token responses, and
// `forge()` signs claims with the provider's own key, another key, or `alg: none`.
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
// @ts-expect-error: oidc-provider ships no type declarations.
import Provider from 'oidc-provider'

export interface IdpAccount {
  sub: string
  email?: string
  /** A boolean as OIDC Core says; a string to try the providers that send one. */
  email_verified?: boolean | string
  name?: string
  /** How the provider says the user signed in (RFC 8176), put in the ID token's `amr`. */
  amr?: string[]
  /** The directory groups, put in the ID token's `groups` (an SSO roleMapping reads them). */
  groups?: string[]
}

export interface IdpClient {
  clientId: string
  clientSecret: string
}

export interface OidcProviderOptions {
  /** Put scope claims (email…) in the ID token (default) or only at userinfo. */
  emailInIdToken?: boolean
  /**
   * The issuer, where a proxy in front of the provider answers for it (the Apple stand-in,
   * test/fixtures/social.ts); default the provider's own loopback URL.
   */
  issuer?: string
}

type Key = CryptoKey

type Payload = Record<string, any>

/** oidc-provider's storage, in memory (its own quick-start adapter warns on every start). */
class MemoryAdapter {
  private static readonly rows = new Map<string, { payload: Payload; expiresAt: number }>()
  private readonly model: string
  constructor(model: string) {
    this.model = model
  }
  private key(id: string) {
    return `${this.model}:${id}`
  }
  async upsert(id: string, payload: Payload, expiresIn?: number) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Number.POSITIVE_INFINITY
    MemoryAdapter.rows.set(this.key(id), { payload, expiresAt })
  }
  async find(id: string) {
    const row = MemoryAdapter.rows.get(this.key(id))
    return row && row.expiresAt > Date.now() ? row.payload : undefined
  }
  async findByUid(uid: string) {
    for (const [key, row] of MemoryAdapter.rows) {
      if (key.startsWith(`${this.model}:`) && row.payload.uid === uid) return row.payload
    }
    return undefined
  }
  async findByUserCode() {
    return undefined
  }
  async consume(id: string) {
    const row = MemoryAdapter.rows.get(this.key(id))
    if (row) row.payload.consumed = Math.floor(Date.now() / 1000)
  }
  async destroy(id: string) {
    MemoryAdapter.rows.delete(this.key(id))
  }
  async revokeByGrantId(grantId: string) {
    for (const [key, row] of MemoryAdapter.rows) {
      if (row.payload.grantId === grantId) MemoryAdapter.rows.delete(key)
    }
  }
}

const TTL = {
  AccessToken: 3600,
  AuthorizationCode: 60,
  Grant: 3600,
  IdToken: 3600,
  Interaction: 600,
  Session: 3600,
}

export class OidcProviderFixture {
  issuer = ''
  private server: Server | undefined
  private port = 0
  /** oidc-provider ships no types. */
  private provider: any
  private readonly accounts = new Map<string, IdpAccount>()
  private readonly pending = new Map<string, { account: IdpAccount; deny?: string }>()
  private signingKey: Key | undefined
  private otherKey: Key | undefined
  private kid = ''
  /** Rewrites the id_token of the next token responses while set. */
  tamperIdToken: ((idToken: string) => Promise<string> | string) | undefined
  /** Requests the provider received, by path (to check what the service sent). */
  readonly requests: { method: string; path: string }[] = []

  async start(options: OidcProviderOptions = {}): Promise<this> {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true })
    const other = await generateKeyPair('RS256', { extractable: true })
    this.signingKey = privateKey
    this.otherKey = other.privateKey
    this.kid = randomBytes(6).toString('hex')
    const jwk: JWK = { ...(await exportJWK(privateKey)), kid: this.kid, alg: 'RS256', use: 'sig' }

    this.server = createServer((req, res) => this.handle(req, res))
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as AddressInfo).port
    this.issuer = options.issuer ?? `http://127.0.0.1:${this.port}`

    this.provider = new Provider(this.issuer, {
      adapter: MemoryAdapter,
      ttl: TTL,
      jwks: { keys: [jwk] },
      cookies: { keys: [randomBytes(16).toString('hex')] },
      // `amr` and `groups` ride with openid, so the ID token carries them whenever set.
      claims: {
        openid: ['sub', 'amr', 'groups'],
        email: ['email', 'email_verified'],
        profile: ['name'],
      },
      conformIdTokenClaims: options.emailInIdToken === false,
      features: { devInteractions: { enabled: false } },
      interactions: {
        url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
      },
      findAccount: (_ctx: unknown, sub: string) => {
        const account = this.accounts.get(sub)
        if (!account) return undefined
        const { amr: _amr, ...claims } = account
        return { accountId: sub, claims: () => ({ ...claims }) }
      },
    })
    this.provider.use(async (ctx: any, next: () => Promise<void>) => {
      this.requests.push({ method: ctx.method, path: ctx.path })
      await next()
      if (ctx.path === '/token' && this.tamperIdToken && ctx.body?.id_token) {
        ctx.body = { ...ctx.body, id_token: await this.tamperIdToken(ctx.body.id_token) }
      }
    })
    return this
  }

  /** Where the provider itself listens (the issuer, unless a proxy answers for it). */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`
  }

  /** Registers a confidential client for one redirect URI. */
  async addClient(
    redirectUri: string,
    tokenAuth: 'client_secret_basic' | 'client_secret_post' = 'client_secret_basic',
  ): Promise<IdpClient> {
    const client = {
      clientId: `client-${randomBytes(6).toString('hex')}`,
      clientSecret: randomBytes(24).toString('base64url'),
    }
    await this.provider.Client.adapter.upsert(client.clientId, {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: tokenAuth,
    })
    return client
  }

  /**
   * Plays the browser: opens the authorization URL, signs in as `account` (or, with
   * `deny`, refuses with that OAuth error), and answers the URL the provider redirected
   * to outside itself (the service's callback, with code and state or error).
   */
  async authorize(authorizationUrl: string, account: IdpAccount, deny?: string): Promise<URL> {
    const end = await this.walk(authorizationUrl, account, deny)
    if (end instanceof URL) return end
    throw new Error(`provider answered ${end.status}: ${await end.text()}`)
  }

  /**
   * As `authorize`, for `response_mode=form_post` (OAuth 2.0 Form Post Response Mode): the
   * provider's page posts a form to the service; answers its action and fields.
   */
  async authorizeForm(
    authorizationUrl: string,
    account: IdpAccount,
    deny?: string,
  ): Promise<{ action: URL; fields: Record<string, string> }> {
    const end = await this.walk(authorizationUrl, account, deny)
    if (end instanceof URL) throw new Error(`redirected to ${end.href}, not a form post`)
    const html = await end.text()
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
    if (end.status !== 200 || !action) throw new Error(`provider answered ${end.status}: ${html}`)
    const fields: Record<string, string> = {}
    for (const input of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) {
      fields[unescapeHtml(input[1])] = unescapeHtml(input[2])
    }
    return { action: new URL(unescapeHtml(action)), fields }
  }

  /** Follows the provider's redirects: the URL that leaves it, or the page it ends on. */
  private async walk(
    authorizationUrl: string,
    account: IdpAccount,
    deny?: string,
  ): Promise<URL | Response> {
    this.accounts.set(account.sub, account)
    const jar = new Map<string, string>()
    let url = new URL(authorizationUrl)
    for (let hop = 0; hop < 10; hop++) {
      if (url.origin !== this.issuer) return url
      const match = /^\/interaction\/([^/]+)$/.exec(url.pathname)
      if (match) this.pending.set(match[1], { account, deny })
      const res = await fetch(url, {
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      })
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';')
        const eq = pair.indexOf('=')
        jar.set(pair.slice(0, eq), pair.slice(eq + 1))
      }
      const location = res.headers.get('location')
      if (!location) return res
      url = new URL(location, url)
    }
    throw new Error('too many redirects')
  }

  /** Signs claims as an ID token: with the provider's key, another key, or no signature. */
  async forge(
    claims: Record<string, unknown>,
    how: 'provider' | 'other-key' | 'none' = 'provider',
  ): Promise<string> {
    if (how === 'none') {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
      return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`
    }
    const key = how === 'provider' ? this.signingKey : this.otherKey
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: this.kid }).sign(key as Key)
  }

  /** Sets `tamperIdToken` to re-sign the provider's ID token with `change` applied. */
  rewriteIdToken(
    change: (claims: Record<string, unknown>) => Record<string, unknown>,
    how: 'provider' | 'other-key' | 'none' = 'provider',
  ): void {
    this.tamperIdToken = (idToken) => this.forge(change({ ...decodeJwt(idToken) }), how)
  }

  /** Stops answering (connections refused) until `resume()`; the port is kept. */
  async pause(): Promise<void> {
    const server = this.server
    if (!server) return
    this.server = undefined
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  async resume(): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res))
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
  }

  async close(): Promise<void> {
    await this.pause()
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const match = /^\/interaction\/([^/?]+)/.exec(req.url ?? '')
    if (!match) {
      this.provider.callback()(req, res)
      return
    }
    this.interact(req, res, match[1]).catch((error: Error) => {
      res.statusCode = 500
      res.end(String(error?.stack ?? error))
    })
  }

  /** The login and consent prompt, answered at once as the account the test chose. */
  private async interact(req: IncomingMessage, res: ServerResponse, uid: string): Promise<void> {
    const details = await this.provider.interactionDetails(req, res)
    const choice = this.pending.get(uid)
    this.pending.delete(uid)
    if (!choice) throw new Error(`no account chosen for interaction ${uid}`)
    if (choice.deny) {
      await this.provider.interactionFinished(
        req,
        res,
        { error: choice.deny, error_description: 'The user said no.' },
        { mergeWithLastSubmission: false },
      )
      return
    }
    const accountId = choice.account.sub
    const grant = new this.provider.Grant({ accountId, clientId: details.params.client_id })
    grant.addOIDCScope(details.params.scope)
    const grantId = await grant.save()
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId, amr: choice.account.amr }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    )
  }
}

const unescapeHtml = (text: string) =>
  text
    .replaceAll('&quot;', '"')
    .replaceAll('&#39;', "'")
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&amp;', '&')

export async function startOidcProvider(options?: OidcProviderOptions) {
  return new OidcProviderFixture().start(options)
}
