// Auth.js (next-auth 5) with the tenant's OpenID provider as its one provider: an OpenID
// Connect provider found by discovery at AUTH_ISSUER, a `web` application's id and secret,
// the code flow with PKCE and state (Auth.js's defaults for `type: 'oidc'`).
import NextAuth from 'next-auth'

export const { handlers, auth, signIn, signOut } = NextAuth({
  providers: [
    {
      id: 'tenant-auth',
      name: 'tenant-auth',
      type: 'oidc',
      issuer: process.env.AUTH_ISSUER,
      clientId: process.env.AUTH_CLIENT_ID,
      clientSecret: process.env.AUTH_CLIENT_SECRET,
      authorization: { params: { scope: 'openid email profile' } },
    },
  ],
  callbacks: {
    // The session the pages see: the user id (`sub`) beside Auth.js's name and address.
    jwt({ token, profile }) {
      if (profile?.sub) token.sub = profile.sub
      return token
    },
    session({ session, token }) {
      session.user.id = token.sub
      return session
    },
  },
})
