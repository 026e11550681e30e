// An API that accepts the access tokens a tenant's OpenID provider issues for it (RFC 9068
// JWTs, `aud` = the API resource's identifier) and verifies them with jose against the
// issuer's published keys. GET /reports needs the `reports:read` scope.
//
//   ISSUER=http://localhost:3000/oidc/acme AUDIENCE=https://reports.example.com \
//     PORT=4000 node examples/api-jose/server.ts
import { createServer } from 'node:http'
import { createRemoteJWKSet, errors, jwtVerify } from 'jose'

const issuer = required('ISSUER')
const audience = required('AUDIENCE')
const port = Number(process.env.PORT ?? 4000)

// Every tenant's issuer signs with the service's keys: the `issuer` check below is what
// tells this tenant's tokens from another tenant's, so it must never be left out.
const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`))

const server = createServer(async (req, res) => {
  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body))
  if (req.method !== 'GET' || req.url !== '/reports') return reply(404, { error: 'not_found' })

  const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1]
  const challenge = 'Bearer realm="reports"'
  if (!token) return reply(401, { error: 'missing_token' }, { 'www-authenticate': challenge })
  try {
    const { payload } = await jwtVerify(token, jwks, { issuer, audience, typ: 'at+jwt' })
    const scopes = String(payload.scope ?? '').split(' ')
    if (!scopes.includes('reports:read')) {
      return reply(403, { error: 'insufficient_scope', scope: 'reports:read' })
    }
    return reply(200, {
      reports: [{ id: 1, title: 'Quarterly' }],
      client: payload.client_id,
      sub: payload.sub,
    })
  } catch (error) {
    const reason = error instanceof errors.JOSEError ? error.code : 'ERR_INVALID'
    return reply(
      401,
      { error: 'invalid_token', reason },
      { 'www-authenticate': `${challenge}, error="invalid_token"` },
    )
  }
})

server.listen(port, '127.0.0.1', () =>
  console.log(`reports API on http://127.0.0.1:${port}/reports`),
)

function required(name: string): string {
  const value = process.env[name]
  if (!value) {
    console.error(`${name} is required`)
    process.exit(2)
  }
  return value
}
