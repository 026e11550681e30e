// A machine (a nightly job, a backend service) that gets an access token for an API by the
// client-credentials grant with openid-client, then calls the API with it.
//
//   ISSUER=http://localhost:3000/oidc/acme CLIENT_ID=… CLIENT_SECRET=… \
//   RESOURCE=https://reports.example.com API_URL=http://127.0.0.1:4000/reports \
//     node examples/machine-client/client.ts
import * as client from 'openid-client'

const issuer = new URL(required('ISSUER'))
const resource = required('RESOURCE')
const apiUrl = required('API_URL')

const config = await client.discovery(
  issuer,
  required('CLIENT_ID'),
  undefined,
  client.ClientSecretBasic(required('CLIENT_SECRET')),
  // Plain http only for a service on this machine (the Quick start); never in production.
  issuer.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : undefined,
)

// The provider answers each token with its lifetime: a long-running machine keeps the token
// and asks for a new one shortly before `expires_in` runs out, rather than one per call.
const tokens = await client.clientCredentialsGrant(config, {
  scope: process.env.SCOPE ?? 'reports:read',
  resource,
})
console.log(`token for ${resource}: scope "${tokens.scope}", expires in ${tokens.expires_in} s`)

const answer = await fetch(apiUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } })
console.log(`GET ${apiUrl}: ${answer.status} ${await answer.text()}`)
process.exitCode = answer.ok ? 0 : 1

function required(name: string): string {
  const value = process.env[name]
  if (!value) {
    console.error(`${name} is required`)
    process.exit(2)
  }
  return value
}
