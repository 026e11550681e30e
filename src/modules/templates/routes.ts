// Mail templates (CONTRACT §20): an admin's token or an API key holding tenant:write.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Deps } from '../../deps.ts'
import { Ok, responses, TenantSlugParams } from '../../schemas.ts'
import {
  PreviewBody,
  Rendered,
  TemplateBody,
  TemplateEnvelope,
  TemplateList,
  TemplateParams,
} from './schemas.ts'
import {
  deleteEmailTemplate,
  listEmailTemplates,
  previewEmailTemplate,
  putEmailTemplate,
} from './service.ts'

export async function templateRoutes(fastify: FastifyInstance, { deps }: { deps: Deps }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Mail templates']
  const config = { auth: 'admin' as const, permission: 'tenant:write' as const }

  app.get(
    '/email-templates',
    {
      config,
      schema: {
        operationId: 'listEmailTemplates',
        tags,
        summary: 'List the customised mail templates',
        description:
          'The tenant’s own templates (by kind, then locale) and, for programs, every kind’s required and allowed placeholders and the locales a template may use. A mail with no template of its kind in its language is sent in the default wording.',
        params: TenantSlugParams,
        response: responses(TemplateList, { 400: [], 404: [] }),
      },
    },
    async (request) => listEmailTemplates(deps, request.tenant.id),
  )

  app.put(
    '/email-templates/:kind/:locale',
    {
      config,
      schema: {
        operationId: 'putEmailTemplate',
        tags,
        summary: 'Save the template of a mail in one language',
        description:
          'Replaces the default wording of the `kind` mail sent in `locale`. The text (and the HTML, when given) must hold the placeholder the kind needs and no placeholder the kind does not fill: else 400 validation naming it. The HTML is sanitized and stored as the answer shows it. Audit `EmailTemplateUpdated`.',
        params: TemplateParams,
        body: TemplateBody,
        response: responses(TemplateEnvelope, { 400: [], 404: [] }),
      },
    },
    async (request) =>
      putEmailTemplate(
        deps,
        request.tenant.id,
        request.params.kind,
        request.params.locale,
        request.body,
        request.actor,
      ),
  )

  app.delete(
    '/email-templates/:kind/:locale',
    {
      config,
      schema: {
        operationId: 'deleteEmailTemplate',
        tags,
        summary: 'Go back to the default mail',
        description:
          'Removes the template: the mail is sent in the default wording again. 404 when there is none. Audit `EmailTemplateUpdated` (change `reset`).',
        params: TemplateParams,
        response: responses(Ok, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) => {
      await deleteEmailTemplate(
        deps,
        request.tenant.id,
        request.params.kind,
        request.params.locale,
        request.actor,
      )
      return { ok: true as const }
    },
  )

  app.post(
    '/email-templates/:kind/:locale/preview',
    {
      config,
      // The body is optional: none is the same as an empty draft.
      preValidation: async (request) => {
        request.body ??= {}
      },
      schema: {
        operationId: 'previewEmailTemplate',
        tags,
        summary: 'Render a mail with sample values',
        description:
          'The draft sent (checked as PUT checks it, nothing stored), else the saved template, else the default mail (404 for a kind with no default yet), rendered with sample values.',
        params: TemplateParams,
        body: PreviewBody,
        response: responses(Rendered, { 400: [], 404: ['not_found'] }),
      },
    },
    async (request) =>
      previewEmailTemplate(
        deps,
        request.tenant,
        request.params.kind,
        request.params.locale,
        request.body,
      ),
  )
}
