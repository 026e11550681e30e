// A back end of your own whose /api routes accept the access tokens of one tenant of the
// service, checked offline with @tenant-auth/sdk (in your project:
// `import { fastifyAuth } from '@tenant-auth/sdk'`).
//
//   AUTH_ISSUER=http://localhost:3000 AUTH_TENANT_ID=<tenant uuid> node examples/backend.ts
//
// With JWT_ALG ES256 or EdDSA at the service, tokens are checked against its JWKS; with
// HS256, set JWT_SECRET here to the service's. AUTH_INTROSPECT_KEY (an API key of the
// tenant) also asks the service on each request, so a logout is refused at once.
import Fastify from 'fastify'
import { type AccessTokenClaims, fastifyAuth, type VerifyOptions } from '../sdk/src/index.ts'

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AccessTokenClaims
  }
}

export function buildBackend(auth: VerifyOptions) {
  const app = Fastify()
  app.get('/health', async () => ({ ok: true }))
  app.register(async (api) => {
    api.addHook('preHandler', fastifyAuth(auth))
    api.get('/api/profile', async (request) => {
      const { sub, tid, role } = request.auth as AccessTokenClaims
      return { userId: sub, tenantId: tid, role }
    })
  })
  return app
}

/** The verifier's options from the environment. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): VerifyOptions {
  const issuer = env.AUTH_ISSUER ?? 'http://localhost:3000'
  const tenantId = env.AUTH_TENANT_ID
  if (!tenantId) throw new Error('AUTH_TENANT_ID: the tenant id (uuid) is required')
  const options: VerifyOptions = env.JWT_SECRET
    ? { issuer, tenantId, secret: env.JWT_SECRET }
    : { issuer, tenantId, jwksUrl: env.AUTH_JWKS_URL ?? `${issuer}/.well-known/jwks.json` }
  if (env.AUTH_INTROSPECT_KEY) {
    options.introspect = {
      url: env.AUTH_INTROSPECT_URL ?? `${issuer}/v1/${env.AUTH_TENANT_SLUG}/oauth/introspect`,
      apiKey: env.AUTH_INTROSPECT_KEY,
    }
  }
  return options
}

if (import.meta.main) {
  const app = buildBackend(optionsFromEnv(process.env))
  const address = await app.listen({ port: Number(process.env.PORT ?? 4000), host: '127.0.0.1' })
  console.log(`backend listening on ${address}`)
  process.once('SIGTERM', () => void app.close())
}
