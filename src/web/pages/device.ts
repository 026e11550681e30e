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
import { type KoaContext, providerT, sendProviderPage } from '../provider-page.ts'

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
const CODE_ERRORS = {
  NoCodeError: 'device.noCode',
  NotFoundError: 'device.notFound',
  ExpiredError: 'device.expired',
  AlreadyUsedError: 'device.alreadyUsed',
} as const

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
    const t = await providerT(db, tenantId, ctx)
    const aborted = err?.name === 'AbortedError'
    const known = CODE_ERRORS[(err?.name ?? '') as keyof typeof CODE_ERRORS]
    const message = err && !aborted && known ? t(known) : undefined
    let errors: FormErrors | undefined
    // RFC 8628 §5.1: this address, or everyone at this workspace's page, tried too many
    // codes (routes.ts); nothing was looked up.
    const refused = ctx.req[DEVICE_CODES_REFUSED]
    if (refused) {
      const wait = inMinutes(refused.retryAfter, t)
      errors = {
        form:
          refused.by === 'address'
            ? t('device.tooManyAddress', { wait })
            : t('device.tooManyPage', { wait }),
      }
      ctx.set('retry-after', String(refused.retryAfter))
    } else if (message) errors = { form: t('device.notAccepted'), fields: { user_code: message } }
    else if (err && !aborted) {
      // Any other failure (a form sent twice, an expired page): the form again, from fresh.
      errors = { form: t('device.again') }
    }
    const body = html`<h1>${t('device.title')}</h1>
${aborted ? notice(t('device.cancelled')) : ''}
${errorSummary(errors, t)}
<p>${t('device.intro')}</p>
<form method="post" action="${ctx.oidc.urlFor('code_verification')}" novalidate>
${xsrfField(ctx)}
${field({
  name: 'user_code',
  label: t('device.codeLabel'),
  hint: t('device.codeHint', { example: 'BCDF-GHJK' }),
  autocomplete: 'off',
  value: err?.userCode,
  errors,
})}
<button type="submit" class="primary">${t('common.continue')}</button>
</form>`
    await send(ctx, t('device.title'), body, refused ? 429 : errors ? 400 : 200)
  }

  async function userCodeConfirmSource(
    ctx: DeviceContext,
    _form: string,
    client: DeviceClient,
    _deviceInfo: unknown,
    userCode: string,
  ) {
    const name = nameOf(client)
    const t = await providerT(db, tenantId, ctx)
    const body = html`<h1>${t('device.confirmHeading', { name })}</h1>
<p>${t('device.checkCode')}</p>
<p class="user-code"><code>${userCode}</code></p>
<p class="hint">${t('device.confirmHint')}</p>
<form method="post" action="${ctx.oidc.urlFor('code_verification')}" class="consent-actions">
${xsrfField(ctx)}
<input type="hidden" name="user_code" value="${ctx.oidc.params?.user_code ?? userCode}">
<button type="submit" name="confirm" value="yes" class="primary">${t('common.continue')}</button>
<button type="submit" name="abort" value="yes" class="danger">${t('common.cancel')}</button>
</form>`
    await send(ctx, t('device.confirmTitle', { name }), body)
  }

  async function successSource(ctx: DeviceContext) {
    const name = nameOf(ctx.oidc.client)
    const t = await providerT(db, tenantId, ctx)
    const body = html`<h1>${t('device.successHeading')}</h1>
<p>${t('device.successText', { name })}</p>`
    await send(ctx, t('device.successTitle'), body)
  }

  return { userCodeInputSource, userCodeConfirmSource, successSource }
}
