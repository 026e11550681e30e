// The OpenID provider's part of `npm run bench` (CONTRACT §11), used by bench/run.ts: the
// tenant's applications and API resource made through the admin API, a browserless
// authorization-code flow that mints codes for the exchange path, and the bounded Provider
// cache's memory with 10,000 tenants touched in turn.
//
// Codes are minted over HTTP, as an application and a browser would get them, not inserted
// as models: the bench signs in once on the hosted page (a form post with its CSRF field),
// runs one authorization request through the hosted page's interaction (login, then the
// first-party grant), and from then on the provider session cookie and the grant it
// remembers answer each authorization request at once with a redirect carrying a code. A
// code lives 60 s (provider.ts), so each round mints its own just before it starts.
import { createHash, randomBytes } from 'node:crypto'
import pg from 'pg'

export const REDIRECT_URI = 'https://app.bench.example/callback'
export const RESOURCE = 'https://api.bench.example/'
export const RESOURCE_SCOPE = 'bench:read'

/** Cookies by name, as one browser keeps them (paths ignored: the flow is sequential). */
export class Jar {
  private readonly cookies = new Map<string, string>()

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  }

  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const eq = pair.indexOf('=')
      const name = pair.slice(0, eq).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))
      if (expired || pair.slice(eq + 1) === '') this.cookies.delete(name)
      else this.cookies.set(name, pair.slice(eq + 1))
    }
  }
}

export interface OidcFixture {
  issuer: string
  tokenUrl: string
  introspectionUrl: string
  machine: { clientId: string; basic: string }
  web: { clientId: string; basic: string }
  /** The claims of a client-credentials access token of this run (the bare route signs alike). */
  accessTokenClaims: Record<string, unknown>
  accessTokenHeader: Record<string, unknown>
  /** An opaque access token of the machine app (client credentials without a resource). */
  opaqueToken: string
  jar: Jar
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString()

async function json(res: Response, what: string): Promise<any> {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${await res.text()}`)
  return res.json()
}

/** The resource, a machine and a first-party web app of the tenant, and one signed-in browser. */
export async function setUpOidc(
  base: string,
  slug: string,
  adminToken: string,
  email: string,
  password: string,
): Promise<OidcFixture> {
  const admin = (path: string, body: unknown) =>
    fetch(`${base}/v1/${slug}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
      body: JSON.stringify(body),
    }).then((res) => json(res, path))
  await admin('api-resources', {
    name: 'Bench API',
    identifier: RESOURCE,
    scopes: [{ name: RESOURCE_SCOPE }],
  })
  const machine = await admin('applications', {
    name: 'Bench job',
    type: 'machine',
    allowedScopes: [RESOURCE_SCOPE],
  })
  const web = await admin('applications', {
    name: 'Bench web',
    type: 'web',
    redirectUris: [REDIRECT_URI],
  })
  const issuer = `${base}/oidc/${slug}`
  const meta = await fetch(`${issuer}/.well-known/openid-configuration`).then((r) =>
    json(r, 'discovery'),
  )
  const fixture: OidcFixture = {
    issuer,
    tokenUrl: meta.token_endpoint,
    introspectionUrl: meta.introspection_endpoint,
    machine: {
      clientId: machine.application.clientId,
      basic: basic(machine.application.clientId, machine.clientSecret),
    },
    web: {
      clientId: web.application.clientId,
      basic: basic(web.application.clientId, web.clientSecret),
    },
    accessTokenClaims: {},
    accessTokenHeader: {},
    opaqueToken: '',
    jar: new Jar(),
  }

  const jwt = await clientCredentials(fixture, true)
  const [header, payload] = jwt.split('.').slice(0, 2)
  fixture.accessTokenHeader = JSON.parse(Buffer.from(header, 'base64url').toString())
  fixture.accessTokenClaims = JSON.parse(Buffer.from(payload, 'base64url').toString())
  fixture.opaqueToken = await clientCredentials(fixture, false)
  const active = await fetch(fixture.introspectionUrl, {
    method: 'POST',
    headers: {
      authorization: fixture.machine.basic,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form({ token: fixture.opaqueToken }),
  }).then((r) => json(r, 'introspection'))
  if (active.active !== true) throw new Error('introspection: the opaque token is not active')

  await signInOnHostedPage(base, slug, email, password, fixture.jar)
  // The first code goes through the hosted page's interaction (login, then the grant).
  const [first] = await mintCodes(base, fixture, 1)
  await exchange(fixture, first)
  return fixture
}

export function clientCredentialsBody(withResource = true): string {
  return form({
    grant_type: 'client_credentials',
    ...(withResource ? { scope: RESOURCE_SCOPE, resource: RESOURCE } : {}),
  })
}

async function clientCredentials(f: OidcFixture, withResource: boolean): Promise<string> {
  const res = await fetch(f.tokenUrl, {
    method: 'POST',
    headers: {
      authorization: f.machine.basic,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: clientCredentialsBody(withResource),
  })
  return (await json(res, 'client credentials')).access_token
}

async function signInOnHostedPage(
  base: string,
  slug: string,
  email: string,
  password: string,
  jar: Jar,
): Promise<void> {
  const page = await fetch(`${base}/t/${slug}/sign-in`)
  jar.take(page)
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())?.[1]
  if (!csrf) throw new Error('sign-in page: no _csrf field')
  const res = await fetch(`${base}/t/${slug}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
    body: form({ email, password, _csrf: csrf }),
  })
  jar.take(res)
  if (res.status !== 303) throw new Error(`hosted sign-in: ${res.status} ${await res.text()}`)
}

export interface MintedCode {
  code: string
  verifier: string
}

/** One authorization request followed as a browser would, to the redirect with its code. */
async function authorize(base: string, f: OidcFixture): Promise<MintedCode> {
  const verifier = randomBytes(32).toString('base64url')
  const query = new URLSearchParams({
    client_id: f.web.clientId,
    response_type: 'code',
    scope: 'openid',
    redirect_uri: REDIRECT_URI,
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  })
  let url = `${f.issuer}/auth?${query}`
  for (let hop = 0; hop < 10; hop++) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: f.jar.header() } })
    f.jar.take(res)
    const location = res.headers.get('location')
    if (res.status < 300 || res.status >= 400 || !location) {
      throw new Error(`authorization: ${res.status} at ${url}: ${(await res.text()).slice(0, 300)}`)
    }
    await res.arrayBuffer()
    const next = new URL(location, url)
    if (next.href.startsWith(REDIRECT_URI)) {
      const code = next.searchParams.get('code')
      if (!code) throw new Error(`authorization: ${next.search}`)
      return { code, verifier }
    }
    url = next.href
    if (!url.startsWith(base)) throw new Error(`authorization: sent to ${url}`)
  }
  throw new Error('authorization: too many redirects')
}

/** `count` codes, `width` authorization requests in flight. */
export async function mintCodes(
  base: string,
  f: OidcFixture,
  count: number,
  width = 8,
): Promise<MintedCode[]> {
  const out: MintedCode[] = []
  let left = count
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async () => {
      while (left > 0) {
        left--
        out.push(await authorize(base, f))
      }
    }),
  )
  return out
}

export function exchangeBody(minted: MintedCode): string {
  return form({
    grant_type: 'authorization_code',
    code: minted.code,
    redirect_uri: REDIRECT_URI,
    code_verifier: minted.verifier,
  })
}

async function exchange(f: OidcFixture, minted: MintedCode): Promise<void> {
  const res = await fetch(f.tokenUrl, {
    method: 'POST',
    headers: { authorization: f.web.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: exchangeBody(minted),
  })
  const tokens = await json(res, 'code exchange')
  if (!tokens.id_token) throw new Error('code exchange: no id_token')
}

// ---------------------------------------------------------------------------------------
// The Provider pool's memory.

export const POOL_TENANTS = 10_000
export const POOL_SAMPLES = [1_000, 5_000, 10_000]
/** Flat: the heap after GC at the last sample within this share of the first's. */
export const POOL_MARGIN = 0.1

/** Tenants bench-pool-1 … bench-pool-N, inserted directly once (reused by later runs). */
export async function seedPoolTenants(dbUrl: string, count = POOL_TENANTS): Promise<void> {
  const client = new pg.Client({ connectionString: dbUrl })
  await client.connect()
  try {
    await client.query(
      `INSERT INTO tenants (id, slug, name, created_at, updated_at)
       SELECT md5('bench-pool-' || i)::uuid, 'bench-pool-' || i, 'Pool ' || i, now(), now()
       FROM generate_series(1, $1::int) i
       ON CONFLICT DO NOTHING`,
      [count],
    )
  } finally {
    await client.end()
  }
}

/** V8's heap of a process started with --inspect, after a full collection (DevTools protocol). */
export class HeapProbe {
  private socket?: WebSocket
  private id = 0
  private readonly waiting = new Map<number, (result: any) => void>()

  async connect(inspectPort: number): Promise<void> {
    const [target] = await fetch(`http://127.0.0.1:${inspectPort}/json/list`).then((r) => r.json())
    const socket = new WebSocket(target.webSocketDebuggerUrl)
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true })
      socket.addEventListener('error', reject, { once: true })
    })
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data))
      this.waiting.get(message.id)?.(message.result)
      this.waiting.delete(message.id)
    })
    this.socket = socket
  }

  private call(method: string): Promise<any> {
    const id = ++this.id
    return new Promise((resolve) => {
      this.waiting.set(id, resolve)
      this.socket?.send(JSON.stringify({ id, method }))
    })
  }

  /** MB of heap in use after a full collection. */
  async usedAfterGc(): Promise<number> {
    await this.call('HeapProfiler.collectGarbage')
    const usage = await this.call('Runtime.getHeapUsage')
    return usage.usedSize / 2 ** 20
  }

  close(): void {
    this.socket?.close()
  }
}

/**
 * Discovery of tenants bench-pool-from … bench-pool-to in turn (`width` in flight), each a
 * Provider built and, once the pool holds 200, another evicted.
 */
export async function touchTenants(
  base: string,
  from: number,
  to: number,
  width = 4,
): Promise<void> {
  let next = from
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next <= to) {
        const i = next++
        const res = await fetch(`${base}/oidc/bench-pool-${i}/.well-known/openid-configuration`)
        if (res.status !== 200) throw new Error(`discovery of bench-pool-${i}: ${res.status}`)
        await res.arrayBuffer()
      }
    }),
  )
}
