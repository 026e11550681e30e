// A single-page application signing in with oidc-client-ts: a `spa` application of the
// tenant (public, no secret), the authorization code flow with PKCE, tokens kept in
// sessionStorage (the library's default). serve.ts hands it config.json.
const config = await fetch('/config.json').then((r) => r.json())
const manager = new oidc.UserManager({
  authority: config.issuer,
  client_id: config.clientId,
  redirect_uri: `${location.origin}/`,
  post_logout_redirect_uri: `${location.origin}/`,
  scope: 'openid email profile',
  // The ID token carries the granted claims; userinfo is asked too, as most SPAs do.
  loadUserInfo: true,
})

const $ = (id) => document.getElementById(id)
const params = new URLSearchParams(location.search)
if (params.has('code') || params.has('error')) {
  try {
    await manager.signinRedirectCallback()
  } catch (error) {
    $('who').textContent = `Sign-in failed: ${error.message}`
  }
  history.replaceState(null, '', '/')
}

const user = await manager.getUser()
if (user && !user.expired) {
  $('who').textContent = `Signed in as ${user.profile.email ?? user.profile.sub}`
  $('claims').textContent = JSON.stringify(user.profile, null, 2)
  $('claims').hidden = false
  $('sign-out').hidden = false
} else if (!$('who').textContent.startsWith('Sign-in failed')) {
  $('who').textContent = 'Not signed in'
  $('sign-in').hidden = false
}
$('sign-in').onclick = () => manager.signinRedirect()
$('sign-out').onclick = () => manager.signoutRedirect({ id_token_hint: user?.id_token })
