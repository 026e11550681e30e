// A server-rendered Express site that signs people in with express-openid-connect through a
// tenant's OpenID provider: a `web` application (a secret), the authorization code flow.
// `/` says who is signed in, `/profile` requires a sign-in and shows the ID token's claims,
// `/logout` ends the session at the provider too (RP-initiated logout).
//
//   ISSUER=http://localhost:3000/oidc/acme CLIENT_ID=… CLIENT_SECRET=… \
//   BASE_URL=http://localhost:5000 SESSION_SECRET=$(openssl rand -hex 32) \
//     node examples/express-openid-connect/app.ts
import express from 'express'
import eoc from 'express-openid-connect'

const { auth, requiresAuth } = eoc

const baseURL = required('BASE_URL')
const port = Number(new URL(baseURL).port || 80)

const app = express()
app.use(
  auth({
    issuerBaseURL: required('ISSUER'),
    baseURL,
    clientID: required('CLIENT_ID'),
    clientSecret: required('CLIENT_SECRET'),
    // Encrypts the library's own session cookie; 32 random bytes or more.
    secret: required('SESSION_SECRET'),
    authRequired: false,
    // The code flow (the library's default is the form-post hybrid flow, which the
    // provider does not offer); `email profile` put the address and name in the ID token.
    authorizationParams: { response_type: 'code', scope: 'openid email profile' },
    idpLogout: true,
  }),
)

app.get('/', (req, res) => {
  const user = req.oidc.user
  res
    .type('html')
    .send(
      user
        ? `<p id="who">Signed in as ${escapeHtml(String(user.email ?? user.sub))}</p><a href="/profile">Profile</a> <a href="/logout">Sign out</a>`
        : '<p id="who">Not signed in</p><a href="/login">Sign in</a>',
    )
})

app.get('/profile', requiresAuth(), (req, res) => {
  res.json(req.oidc.user)
})

app.listen(port, '127.0.0.1', () => console.log(`express example on ${baseURL}`))

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

function required(name: string): string {
  const value = process.env[name]
  if (!value) {
    console.error(`${name} is required`)
    process.exit(2)
  }
  return value
}
