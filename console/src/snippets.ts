// Quick starts for one application (CONTRACT §11): what a developer pastes to sign people
// in with it, or (a machine app) to get a token for an API. The issuer, client id, redirect
// URI and scopes are filled in; secrets are read from the environment, because the page is
// shown again long after its secret was.
import type { Schemas } from './api.ts'

type Application = Schemas['Application']
type ApiResource = Schemas['ApiResource']

export interface QuickStart {
  title: string
  code: string
}

export interface QuickStartInput {
  app: Application
  issuer: string
  tenant: string
  /** The tenant's API resources, where a machine app's scopes are defined. */
  resources: ApiResource[]
}

const js = (value: string) => `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
const sh = (value: string) => `'${value.replaceAll("'", "'\\''")}'`

export function quickStarts(input: QuickStartInput): QuickStart[] {
  const { app } = input
  if (app.type === 'machine') return [clientCredentials(input), curl(input)]
  if (app.type === 'web') return [codeFlow(input), authJs(input), modAuthOpenidc(input)]
  return [codeFlow(input)]
}

/** The scopes a machine app may get, and the first API resource defining some of them. */
function target({ app, resources }: QuickStartInput) {
  const allowed = new Set(app.allowedScopes)
  const resource = resources.find((r) => r.scopes.some((s) => allowed.has(s.name)))
  const scopes = resource
    ? resource.scopes.filter((s) => allowed.has(s.name)).map((s) => s.name)
    : app.allowedScopes
  return {
    scope: scopes.join(' ') || 'SCOPE',
    resource: resource?.identifier ?? 'https://api.example.com',
  }
}

/** openid-client's client authentication for the application's method (CONTRACT §22). */
function clientAuthOf(app: Application): string {
  switch (app.tokenEndpointAuthMethod) {
    case 'none':
      return 'client.None()'
    case 'client_secret_post':
      return 'client.ClientSecretPost(process.env.CLIENT_SECRET!)'
    case 'private_key_jwt':
      return 'client.PrivateKeyJwt(privateKey) /* a CryptoKey: the private half of a key of its JWK Set */'
    default:
      return 'client.ClientSecretBasic(process.env.CLIENT_SECRET!)'
  }
}

const redirectOf = (app: Application, fallback: string) =>
  app.redirectUris.find((uri) => uri.startsWith('https:')) ?? app.redirectUris[0] ?? fallback

function codeFlow({ app, issuer }: QuickStartInput): QuickStart {
  const secret = app.type === 'web'
  const auth = clientAuthOf(app)
  return {
    title: `openid-client (v6): ${secret ? 'server-side sign-in' : 'sign-in with PKCE'}`,
    code: `import * as client from 'openid-client'

const config = await client.discovery(
  new URL(${js(issuer)}),
  ${js(app.clientId)},
  undefined,
  ${auth},
)
const redirect_uri = ${js(redirectOf(app, 'https://app.example.com/callback'))}

// Sign-in: keep code_verifier with the user's session, then send the browser to url.
const code_verifier = client.randomPKCECodeVerifier()
const url = client.buildAuthorizationUrl(config, {
  redirect_uri,
  scope: 'openid email profile',
  code_challenge: await client.calculatePKCECodeChallenge(code_verifier),
  code_challenge_method: 'S256',
})

// Callback: currentUrl is the URL the browser came back to.
const tokens = await client.authorizationCodeGrant(config, currentUrl, {
  pkceCodeVerifier: code_verifier,
})
const claims = tokens.claims() // sub, email, name…
`,
  }
}

function authJs({ app, issuer, tenant }: QuickStartInput): QuickStart {
  return {
    title: 'Auth.js (next-auth v5)',
    code: `// auth.ts. Register https://<your app>/api/auth/callback/${tenant} as a redirect URI.
import NextAuth from 'next-auth'

export const { handlers, auth, signIn, signOut } = NextAuth({
  providers: [
    {
      id: ${js(tenant)},
      name: ${js(app.name)},
      type: 'oidc',
      issuer: ${js(issuer)},
      clientId: ${js(app.clientId)},
      clientSecret: process.env.AUTH_CLIENT_SECRET,
      authorization: { params: { scope: 'openid email profile' } },
      checks: ['pkce', 'state'],
    },
  ],
})
`,
  }
}

function modAuthOpenidc({ app, issuer }: QuickStartInput): QuickStart {
  return {
    title: 'Apache mod_auth_openidc',
    code: `# OIDC_CLIENT_SECRET and OIDC_CRYPTO_PASSPHRASE (a long random string, such as
# the output of openssl rand -hex 32) come from Apache's environment.
OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration
OIDCClientID ${app.clientId}
OIDCClientSecret \${OIDC_CLIENT_SECRET}
OIDCRedirectURI ${redirectOf(app, 'https://app.example.com/redirect_uri')}
OIDCCryptoPassphrase \${OIDC_CRYPTO_PASSPHRASE}
OIDCScope "openid email profile"
OIDCPKCEMethod S256

<Location />
  AuthType openid-connect
  Require valid-user
</Location>
`,
  }
}

function clientCredentials(input: QuickStartInput): QuickStart {
  const { scope, resource } = target(input)
  return {
    title: 'openid-client (v6): a token by client credentials',
    code: `import * as client from 'openid-client'

const config = await client.discovery(
  new URL(${js(input.issuer)}),
  ${js(input.app.clientId)},
  undefined,
  ${clientAuthOf(input.app)},
)
const { access_token } = await client.clientCredentialsGrant(config, {
  scope: ${js(scope)},
  resource: ${js(resource)},
})
`,
  }
}

function curl(input: QuickStartInput): QuickStart {
  const { scope, resource } = target(input)
  // The token endpoint is {issuer}/token (README, OpenID Connect).
  return {
    title: 'curl: a token by client credentials',
    code: `# CLIENT_SECRET is the application's secret.
curl -s -X POST ${sh(`${input.issuer}/token`)} \\
  -u ${sh(input.app.clientId)}:"$CLIENT_SECRET" \\
  -d grant_type=client_credentials \\
  --data-urlencode ${sh(`scope=${scope}`)} \\
  --data-urlencode ${sh(`resource=${resource}`)}
`,
  }
}
