// Progressive enhancement of the hosted pages; every page works without it, except the
// passkey buttons, which it reveals only where the browser can use passkeys.
const ready = (fn) =>
  document.readyState === 'loading' ? document.addEventListener('DOMContentLoaded', fn) : fn()

ready(() => {
  // A SAML response on its way to the application (web/pages/saml-sso.ts): posted at once.
  const autosubmit = document.querySelector('form[data-autosubmit]')
  if (autosubmit instanceof HTMLFormElement) autosubmit.submit()

  // An error summary takes the focus, so keyboard and screen-reader users land on it.
  const summary = document.querySelector('[data-focus]')
  if (summary instanceof HTMLElement) summary.focus()

  const canPasskey =
    window.PublicKeyCredential &&
    typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function' &&
    typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function'
  for (const element of document.querySelectorAll('[data-passkey]')) {
    if (!canPasskey) continue
    element.hidden = false
    const button = element.querySelector('button')
    button?.addEventListener('click', () => ceremony(element, button))
    // Back from "Confirm it's you" to add a passkey: the ceremony the person asked for goes
    // on, once (the address loses its query, so a reload does not start it again).
    if (element.dataset.autostart !== undefined && button) {
      history.replaceState(null, '', window.location.pathname)
      ceremony(element, button)
    }
  }
})

async function postJson(url, body, failed) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  })
  const data = await res.json().catch(() => ({}))
  if (!res.ok) {
    const error = new Error(data.error || failed)
    // The service wants a recent proof first: where "Confirm it's you" is.
    error.confirm = data.confirm
    throw error
  }
  return data
}

async function ceremony(element, button) {
  const status = element.querySelector('[data-passkey-status]')
  const say = (text) => {
    if (status) status.textContent = text
  }
  // The page's words, in its language (data-cancelled, data-failed).
  const { passkey: kind, base, csrf, cancelled, failed } = element.dataset
  const post = (url, body) => postJson(url, body, failed)
  const email = element.querySelector('input[name="passkey-email"]')?.value
  const name = element.querySelector('input[name="passkey-name"]')?.value
  button.disabled = true
  say('')
  try {
    if (kind === 'register') {
      const options = await post(`${base}/account/passkeys/options`, { _csrf: csrf })
      const credential = await navigator.credentials.create({
        publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options),
      })
      const done = await post(`${base}/account/passkeys`, {
        _csrf: csrf,
        name,
        response: credential.toJSON(),
      })
      window.location.assign(done.redirect)
    } else if (kind === 'reauthenticate') {
      const options = await post(`${base}/account/confirm/passkey/options`, { _csrf: csrf })
      const credential = await navigator.credentials.get({
        publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
      })
      await post(`${base}/account/confirm/passkey`, { _csrf: csrf, response: credential.toJSON() })
      // Proved: the action the person wanted goes on (the prompt's hidden form).
      element.querySelector('form[data-continue]')?.submit()
    } else {
      const options = await post(`${base}/sign-in/passkey/options`, {
        _csrf: csrf,
        email: email || undefined,
      })
      const credential = await navigator.credentials.get({
        publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options),
      })
      const done = await post(`${base}/sign-in/passkey`, {
        _csrf: csrf,
        response: credential.toJSON(),
      })
      window.location.assign(done.redirect)
    }
  } catch (error) {
    if (error?.confirm) {
      const query = name ? `&name=${encodeURIComponent(name)}` : ''
      window.location.assign(`${error.confirm}${query}`)
      return
    }
    say(error?.name === 'NotAllowedError' ? cancelled : error?.message || failed)
    button.disabled = false
  }
}
