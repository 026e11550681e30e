// The organization steps of an OpenID interaction (CONTRACT §18, Provider; the checks are
// modules/oidc/organizations.ts's, these are their pages):
//   - `prompt=select_organization`: the picker lists the user's organizations in the tenant
//     (GET me/organizations through the service, as the account page lists them), one button
//     each; choosing one continues the authorization with that organization (the interaction
//     result's organizationId, which the provider checks as it checks organization_id).
//     Someone in none, or who cancels, goes back to the application with access_denied;
//   - an organization with `mfaRequired` and a session that proved no second factor: the
//     authenticator code or a recovery code, proved by POST me/reauthenticate (which marks
//     the session as having proved one), then the authorization goes on. Someone without an
//     authenticator app is told to set one up on the account page, or cancels.
// Each POST is behind the interaction pages' one CSRF check (authorize.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  interactionOrganization,
  NEEDS_SECOND_FACTOR,
  ORGANIZATION_PROMPT,
  SELECT_ORGANIZATION,
} from '../../modules/oidc/organizations.ts'
import type { OidcInteraction, OidcProvider } from '../../modules/oidc/provider.ts'
import { AuthServiceError } from '../api.ts'
import type { Pages } from '../context.ts'
import { type Html, html, raw } from '../html.ts'
import { AUTHORIZATION_STEP, type Form, formText } from '../http.ts'
import { codeField, errorSummary, type FormErrors, field, hidden } from '../layout.ts'
import { formErrors } from '../messages.ts'
import type { PageSession } from '../session.ts'
import { statusOf } from './flow.ts'

type Req = FastifyRequest<{ Params: { uid: string }; Body: Form }>

/** What the interaction pages lend these steps (authorize.ts). */
export interface InteractionSteps {
  load(
    request: Req,
    reply: FastifyReply,
  ): Promise<{ provider: OidcProvider; interaction: OidcInteraction } | undefined>
  finish(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: OidcProvider,
    result: Record<string, unknown>,
  ): Promise<FastifyReply>
  login(
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
  ): Promise<FastifyReply>
  stale(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>
  /** The page session, when it is the interaction's signed-in user's. */
  sessionOf(
    request: FastifyRequest,
    reply: FastifyReply,
    interaction: OidcInteraction,
  ): Promise<PageSession | undefined>
}

interface Membership {
  id: string
  name: string
  roles: string[]
}

interface StepState {
  errors?: FormErrors
  status?: number
  method?: string
}

/** The application's name, as the consent page names it. */
async function applicationName(provider: OidcProvider, interaction: OidcInteraction) {
  const client = await provider.Client.find(interaction.params.client_id)
  const metadata = client?.metadata() ?? {}
  return String(metadata.client_name ?? interaction.params.client_id)
}

const memberships = async (pages: Pages, request: FastifyRequest, session: PageSession) =>
  ((await pages.api(request, session.accessToken).listMyOrganizations()) as { items: Membership[] })
    .items

const cancelForm = (action: string, csrf: string, label: string): Html =>
  html`<form method="post" action="${action}" novalidate>
${hidden('_csrf', csrf)}${hidden('decision', 'cancel')}
<button type="submit">${label}</button>
</form>`

export function organizationSteps(
  app: FastifyInstance,
  pages: Pages,
  steps: InteractionSteps,
): {
  /** The page of an interaction at the picker or the organization's check, if it is one. */
  show(
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
  ): Promise<FastifyReply> | undefined
} {
  const picker = async (
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
    session: PageSession,
    state: StepState = {},
  ) => {
    const t = pages.t(request, reply)
    const csrf = pages.csrf(request, reply)
    const action = pages.url(request, `authorize/${interaction.uid}/organization`)
    const name = await applicationName(provider, interaction)
    const tenant = request.tenant.name
    const items = await memberships(pages, request, session)
    const choices =
      items.length > 0
        ? html`<form method="post" action="${action}" novalidate>
${hidden('_csrf', csrf)}
<ul class="choices">${items.map(
            (m) =>
              html`<li><button type="submit" name="organizationId" value="${m.id}"><strong>${m.name}</strong>${m.roles.length > 0 ? html`<span class="hint">${t('account.organizationRoles', { roles: m.roles.join(', ') })}</span>` : ''}</button></li>`,
          )}</ul>
</form>`
        : html`<p>${t('orgPicker.none', { name, tenant })}</p>`
    const body = html`<h1>${t('orgPicker.heading')}</h1>
${errorSummary(state.errors, t)}
${items.length > 0 ? html`<p>${t('orgPicker.intro', { name, tenant })}</p>` : ''}
${choices}
${cancelForm(action, csrf, t('common.cancel'))}`
    return pages.send(request, reply, t('orgPicker.title'), body, { status: state.status })
  }

  const secondFactor = async (
    request: Req,
    reply: FastifyReply,
    provider: OidcProvider,
    interaction: OidcInteraction,
    session: PageSession,
    state: StepState = {},
  ) => {
    const t = pages.t(request, reply)
    const csrf = pages.csrf(request, reply)
    const action = pages.url(request, `authorize/${interaction.uid}/second-factor`)
    const name = await applicationName(provider, interaction)
    const asked = interactionOrganization(interaction)
    const [me, items] = await Promise.all([
      pages.api(request, session.accessToken).getMe() as Promise<{ totpEnrolled: boolean }>,
      memberships(pages, request, session),
    ])
    const organization = items.find((m) => m.id === asked)?.name ?? ''
    const proof = (method: string, fields: Html, submit: string) =>
      html`<form method="post" action="${action}" novalidate>
${hidden('_csrf', csrf)}${hidden('method', method)}
${fields}
<button type="submit" class="primary">${submit}</button>
</form>`
    const forms = me.totpEnrolled
      ? html`${proof('totp', codeField('totpCode', t('secondFactor.totpLabel'), state.errors), t('common.continue'))}
<details${state.errors?.fields?.recoveryCode ? raw(' open') : ''}><summary>${t('secondFactor.useRecovery')}</summary>
${proof('recovery', field({ name: 'recoveryCode', label: t('secondFactor.recoveryLabel'), autocomplete: 'off', errors: state.errors }), t('secondFactor.recoverySubmit'))}
</details>`
      : html`<p>${t('orgMfa.enrol', { name })}</p>
<p><a class="button primary" href="${pages.url(request, 'account')}">${t('orgMfa.account')}</a></p>`
    const body = html`<h1>${t('orgMfa.heading')}</h1>
<p>${t('orgMfa.intro', { organization, name })}</p>
${errorSummary(state.errors, t)}
${forms}
${cancelForm(action, csrf, t('common.cancel'))}`
    return pages.send(request, reply, t('orgMfa.title'), body, { status: state.status })
  }

  const cancelled = (request: FastifyRequest, reply: FastifyReply, provider: OidcProvider) =>
    steps.finish(request, reply, provider, {
      error: 'access_denied',
      error_description: 'The user did not go on with an organization',
    })

  /** The interaction at `prompt`, signed in as the page's user; else its answer. */
  const atStep = async (request: Req, reply: FastifyReply, prompt: string) => {
    const found = await steps.load(request, reply)
    if (found?.interaction.prompt.name !== prompt)
      return { answer: await steps.stale(request, reply) }
    const session = await steps.sessionOf(request, reply, found.interaction)
    if (!session) {
      return { answer: await steps.login(request, reply, found.provider, found.interaction) }
    }
    return { ...found, session }
  }

  app.post('/authorize/:uid/organization', AUTHORIZATION_STEP, async (request: Req, reply) => {
    const step = await atStep(request, reply, SELECT_ORGANIZATION)
    if (!('session' in step)) return step.answer
    const { provider, interaction, session } = step
    if (formText(request.body, 'decision') === 'cancel') return cancelled(request, reply, provider)
    const chosen = formText(request.body, 'organizationId')
    const items = await memberships(pages, request, session)
    if (!items.some((m) => m.id === chosen)) {
      const t = pages.t(request, reply)
      return picker(request, reply, provider, interaction, session, {
        errors: { form: t('orgPicker.notOffered') },
        status: 400,
      })
    }
    return steps.finish(request, reply, provider, {
      [SELECT_ORGANIZATION]: { organizationId: chosen },
    })
  })

  app.post('/authorize/:uid/second-factor', AUTHORIZATION_STEP, async (request: Req, reply) => {
    const step = await atStep(request, reply, ORGANIZATION_PROMPT)
    if (!('session' in step)) return step.answer
    const { provider, interaction, session } = step
    if (formText(request.body, 'decision') === 'cancel') return cancelled(request, reply, provider)
    const method = formText(request.body, 'method') === 'recovery' ? 'recovery' : 'totp'
    const target = method === 'recovery' ? 'recoveryCode' : 'totpCode'
    try {
      await pages.api(request, session.accessToken).reauthenticate({
        body: { [target]: formText(request.body, target).trim() } as never,
      })
    } catch (error) {
      // A session that ended meanwhile: the pages' error handler signs the browser out.
      if (
        error instanceof AuthServiceError &&
        error.status === 401 &&
        error.reason !== 'invalid_mfa_code'
      ) {
        throw error
      }
      const errors = formErrors(error, pages.t(request, reply), { totpCode: target })
      return secondFactor(request, reply, provider, interaction, session, {
        errors,
        status: statusOf(error),
        method,
      })
    }
    // The provider's check reads the session's second factor again as the request resumes.
    return steps.finish(request, reply, provider, { [ORGANIZATION_PROMPT]: { secondFactor: true } })
  })

  return {
    show(request, reply, provider, interaction) {
      const { name, reasons } = interaction.prompt
      if (name !== SELECT_ORGANIZATION && !reasons.includes(NEEDS_SECOND_FACTOR)) return undefined
      return (async () => {
        const session = await steps.sessionOf(request, reply, interaction)
        if (!session) return steps.login(request, reply, provider, interaction)
        return name === SELECT_ORGANIZATION
          ? picker(request, reply, provider, interaction, session)
          : secondFactor(request, reply, provider, interaction, session)
      })()
    },
  }
}
