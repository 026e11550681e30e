// The device flow's pages (RFC 8628; CONTRACT §11, Flows) among the hosted pages. A native
// application on a device with no browser (a TV, a command-line tool) shows a short code and
// `verification_uri`, {issuer}/device; there the person:
//   1. enters the code (userCodeInputSource; a wrong, expired or used code shows the error
//      and grants nothing);
//   2. checks the application's name and the code, and continues or cancels
//      (userCodeConfirmSource; Cancel answers the device's next poll with access_denied);
//   3. continues through the usual interaction page (web/pages/authorize.ts): the hosted
//      sign-in unless a live hosted session is there, then consent for a third-party app;
//   4. sees that the device is signed in (successSource) while the device's poll gets its
//      tokens.
// oidc-provider draws these pages through its hooks and keeps the form's CSRF secret
// (`xsrf`) in its own session; the forms here carry the same fields as its defaults.
import type { Db } from '../../db/client.ts'
import { DEVICE_CODES_REFUSED, type DeviceCodesRefusal } from '../../modules/oidc/device.ts'
import { type Html, html } from '../html.ts'
import { errorSummary, type FormErrors, field, notice } from '../layout.ts'
import { inMinutes } from '../messages.ts'
import { type KoaContext, sendProviderPage } from '../provider-page.ts'

interface DeviceContext extends KoaContext {
  req: { [DEVICE_CODES_REFUSED]?: DeviceCodesRefusal }
  oidc: {
    urlFor(route: string): string
    session: { state?: { secret?: string } }
    params?: { user_code?: string }
    client?: { clientId: string; clientName?: string }
  }
}

interface DeviceClient {
  clientId: string
  clientName?: string
}

/** What each of oidc-provider's re-render errors means to the person at the form. */
const CODE_ERRORS: Record<string, string> = {
  NoCodeError: 'Enter the code your device shows.',
  NotFoundError: 'That code is not right. Check the code your device shows and try again.',
  ExpiredError: 'That code has expired. Start again on your device to get a new code.',
  AlreadyUsedError: 'That code was already used. Start again on your device to get a new code.',
}

const nameOf = (client: DeviceClient | undefined) => client?.clientName || client?.clientId || ''

function xsrfField(ctx: DeviceContext): Html {
  return html`<input type="hidden" name="xsrf" value="${ctx.oidc.session.state?.secret ?? ''}">`
}

export function devicePages(db: Db, tenantId: string) {
  // Typed in on another device, which no application's window waits on: same-origin.
  const send = (ctx: DeviceContext, title: string, body: Html, status?: number) =>
    sendProviderPage(db, tenantId, ctx, title, body, { status, authorization: false })

  async function userCodeInputSource(
    ctx: DeviceContext,
    _form: string,
    _out?: { error?: string },
    err?: { name?: string; userCode?: string },
  ) {
    const aborted = err?.name === 'AbortedError'
    const message = err && !aborted ? (CODE_ERRORS[err.name ?? ''] ?? undefined) : undefined
    let errors: FormErrors | undefined
    // RFC 8628 §5.1: this address, or everyone at this workspace's page, tried too many
    // codes (routes.ts); nothing was looked up.
    const refused = ctx.req[DEVICE_CODES_REFUSED]
    if (refused) {
      const wait = inMinutes(refused.retryAfter)
      errors = {
        form:
          refused.by === 'address'
            ? `Too many codes were tried from your network. Please try again ${wait}.`
            : `Too many codes were tried on this page lately. Please try again ${wait}.`,
      }
      ctx.set('retry-after', String(refused.retryAfter))
    } else if (message)
      errors = { form: 'The code was not accepted.', fields: { user_code: message } }
    else if (err && !aborted) {
      // Any other failure (a form sent twice, an expired page): the form again, from fresh.
      errors = { form: 'That did not work. Please enter the code again.' }
    }
    const body = html`<h1>Connect a device</h1>
${aborted ? notice('Cancelled: the device was not signed in.') : ''}
${errorSummary(errors)}
<p>Enter the code shown on the device you are signing in on.</p>
<form method="post" action="${ctx.oidc.urlFor('code_verification')}" novalidate>
${xsrfField(ctx)}
${field({
  name: 'user_code',
  label: 'Code',
  hint: 'Letters only, as the device shows them, for example BCDF-GHJK.',
  autocomplete: 'off',
  value: err?.userCode,
  errors,
})}
<button type="submit" class="primary">Continue</button>
</form>`
    await send(ctx, 'Connect a device', body, refused ? 429 : errors ? 400 : 200)
  }

  async function userCodeConfirmSource(
    ctx: DeviceContext,
    _form: string,
    client: DeviceClient,
    _deviceInfo: unknown,
    userCode: string,
  ) {
    const name = nameOf(client)
    const body = html`<h1>Sign in to ${name} on your device?</h1>
<p>Check that your device shows this code:</p>
<p class="user-code"><code>${userCode}</code></p>
<p class="hint">Continue only if you started this sign-in yourself, on a device you have with you. If the code differs, cancel.</p>
<form method="post" action="${ctx.oidc.urlFor('code_verification')}" class="consent-actions">
${xsrfField(ctx)}
<input type="hidden" name="user_code" value="${ctx.oidc.params?.user_code ?? userCode}">
<button type="submit" name="confirm" value="yes" class="primary">Continue</button>
<button type="submit" name="abort" value="yes" class="danger">Cancel</button>
</form>`
    await send(ctx, `Sign in to ${name}?`, body)
  }

  async function successSource(ctx: DeviceContext) {
    const name = nameOf(ctx.oidc.client)
    const body = html`<h1>Your device is signed in</h1>
<p>${name} on your device is signed in now. You can close this page and go back to the device.</p>`
    await send(ctx, 'Device signed in', body)
  }

  return { userCodeInputSource, userCodeConfirmSource, successSource }
}
