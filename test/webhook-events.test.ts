// Typed events (issue 36): the map of audit events (src/modules/audit/events.ts) drives the
// OpenAPI document's webhooks, the event list of docs/webhooks-and-hooks.md and what the
// service writes. The document and the docs are checked against the map; recorded events
// of real flows (the audit list's metadata and the webhook bodies queued for them) are
// validated against the map's schemas.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { before, describe, test } from 'node:test'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import {
  metadataSchemaOf,
  renderEventList,
  WEBHOOK_DOCS,
  withEventList,
} from '../scripts/check-openapi.ts'
import { asc, eq } from '../src/db/orm.ts'
import { webhookDeliveries } from '../src/db/schema.ts'
import { AUDIT_ACTIONS, type AuditAction } from '../src/modules/audit/actions.ts'
import { AUDIT_EVENTS } from '../src/modules/audit/events.ts'
import { WEBHOOK_EVENT_SCHEMAS, WEBHOOK_TEST } from '../src/modules/webhooks/events.ts'
import {
  createTenant,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from './helpers.ts'

const json = (schema: unknown) => JSON.parse(JSON.stringify(schema))

let server: TestServer
let doc: any
before(async (t) => {
  server = await startTestServer(t)
  doc = (await server.request('GET', '/v1/openapi.json')).body
})

const ajv = new Ajv({ allErrors: true, strict: false })
// ajv-formats is CommonJS: its function is the default export's default under Node's ESM.
;(addFormats as any).default ? (addFormats as any).default(ajv) : (addFormats as any)(ajv)
const validators = new Map<string, ValidateFunction>()
/** The validator of an event type's metadata schema, or of its whole webhook body. */
function validatorOf(type: string, part: 'metadata' | 'body'): ValidateFunction {
  const key = `${part}:${type}`
  const known = validators.get(key)
  if (known) return known
  const body = json(WEBHOOK_EVENT_SCHEMAS.get(type as AuditAction))
  assert.ok(body, `${type} has a schema`)
  delete body.$id
  const validate = ajv.compile(part === 'body' ? body : metadataSchemaOf(body))
  validators.set(key, validate)
  return validate
}

describe('the OpenAPI document', () => {
  test('webhooks: every audit action of the map and WebhookTest, nothing else', () => {
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [...AUDIT_ACTIONS, WEBHOOK_TEST].sort())
    assert.deepEqual(Object.keys(AUDIT_EVENTS).sort(), [...AUDIT_ACTIONS].sort())
  })

  test("each webhook's POST body is its {Action}Event component, its metadata the map's schema", () => {
    for (const action of AUDIT_ACTIONS) {
      const post = doc.webhooks[action].post
      assert.ok(post, action)
      const ref = post.requestBody.content['application/json'].schema.$ref
      assert.equal(ref, `#/components/schemas/${action}Event`, action)
      const component = doc.components.schemas[`${action}Event`]
      assert.equal(component.properties.type.const, action)
      const event = component.properties.data.properties.event
      assert.equal(event.properties.action.const, action)
      assert.deepEqual(event.properties.metadata, json(AUDIT_EVENTS[action]), action)
      // The rest of data.event is the audit list's AuditEvent, field for field.
      const listed = doc.components.schemas.AuditEvent
      assert.deepEqual(Object.keys(event.properties).sort(), Object.keys(listed.properties).sort())
      assert.deepEqual(event.required, listed.required, action)
      assert.deepEqual(
        post.parameters.map((p: any) => [p.in, p.name]),
        [
          ['header', 'webhook-id'],
          ['header', 'webhook-timestamp'],
          ['header', 'webhook-signature'],
        ],
      )
    }
  })

  test('a schema is what the TypeScript type says: closed unless its events pass fields through', () => {
    assert.equal(json(AUDIT_EVENTS.PasskeyRemoved).additionalProperties, false)
    assert.deepEqual(AUDIT_EVENTS.PasskeyRemoved.required, ['passkeyId'])
    assert.equal(json(AUDIT_EVENTS.UserLogin).additionalProperties, true)
    const validate = validatorOf('PasskeyRemoved', 'metadata')
    assert.equal(validate({ passkeyId: 'p' }), true)
    assert.equal(validate({ passkeyID: 'p' }), false, 'a misspelled field is refused')
    assert.equal(validate({}), false, 'a required field is required')
    assert.equal(validatorOf('UserLogin', 'metadata')({ via: 'password', issuer: 'x' }), true)
    assert.equal(validatorOf('MfaRecoveryCodeUsed', 'metadata')({ remaining: 'two' }), false)
  })
})

test('docs/webhooks-and-hooks.md lists every event of the map (npm run openapi:generate writes it)', () => {
  const page = readFileSync(WEBHOOK_DOCS, 'utf8')
  assert.equal(page, withEventList(page, renderEventList()))
  for (const type of [...AUDIT_ACTIONS, WEBHOOK_TEST]) {
    assert.match(page, new RegExp(`^\\| \`${type}\` \\|`, 'm'), type)
  }
  assert.match(page, /\| `PasskeyRemoved` \| A passkey was removed\. \| `passkeyId: string` \|/)
})

describe('recorded events validate against their schemas', () => {
  let t: TenantFixture
  let admin: string
  let webhookId: string
  before(async () => {
    t = await createTenant(server)
    admin = t.admin.accessToken
    const at = (path: string) => `/v1/${t.slug}/${path}`
    const call = async (method: string, path: string, body?: unknown, token = admin) => {
      const res = await server.request(method, at(path), body, { token })
      assert.equal(res.status, 200, `${method} ${path}: ${JSON.stringify(res.body)}`)
      return res.body
    }
    const hook = await call('POST', 'webhooks', {
      url: 'https://hooks.example.com/in?token=secret',
      events: ['*'],
    })
    webhookId = hook.webhook.id
    // A sample of real flows, each writing its own actions.
    const user = await signup(server, t.slug)
    const wrong = await server.request('POST', at('auth/login'), {
      email: user.email,
      password: 'not-the-password-at-all',
    })
    assert.equal(wrong.status, 401)
    const login = await server.request('POST', at('auth/login'), {
      email: user.email,
      password: STRONG_PASSWORD,
    })
    assert.equal(login.status, 200)
    await call(
      'PATCH',
      'me/password',
      { currentPassword: STRONG_PASSWORD, newPassword: 'quartz-harbor-lantern-58' },
      login.body.accessToken,
    )
    const key = await call('POST', 'api-keys', { name: 'CI', environment: 'live' })
    await call('DELETE', `api-keys/${key.apiKey.id}`)
    const invite = await call('POST', 'invites', { email: uniqueEmail('invitee') })
    await call('DELETE', `invites/${invite.invite.id}`)
    await call('PATCH', 'tenant', { name: 'Renamed' })
    await call('POST', `users/${user.user.id}/unlock`)
    const member = await signup(server, t.slug)
    await call('PATCH', `users/${member.user.id}`, { role: 'Admin' })
    await call('DELETE', `users/${member.user.id}`)
    await call('PATCH', `webhooks/${webhookId}`, { description: 'all events' })
    await call('POST', `webhooks/${webhookId}/secret`)
    await call('POST', `webhooks/${webhookId}/test`)
  })

  test("every event of the audit list: its metadata is its action's schema", async () => {
    const res = await server.request('GET', `/v1/${t.slug}/audit?limit=100`, undefined, {
      token: admin,
    })
    assert.equal(res.status, 200)
    const seen = new Set<string>()
    for (const event of res.body.items) {
      const validate = validatorOf(event.action, 'metadata')
      assert.ok(
        validate(event.metadata),
        `${event.action} ${JSON.stringify(event.metadata)}: ${ajv.errorsText(validate.errors)}`,
      )
      seen.add(event.action)
    }
    // Not vacuous: the flows above wrote these (and the checks ran on each).
    for (const action of [
      'TenantCreated',
      'UserSignup',
      'UserLogin',
      'UserLoginFailed',
      'UserPasswordChanged',
      'ApiKeyCreated',
      'ApiKeyRevoked',
      'InviteCreated',
      'InviteRevoked',
      'TenantUpdated',
      'UserUpdated',
      'UserSoftDeleted',
      'UserUnlocked',
      'WebhookCreated',
      'WebhookUpdated',
      'WebhookSecretRotated',
    ]) {
      assert.ok(seen.has(action), `${action} recorded`)
    }
  })

  test('every webhook body queued for them is its {Type}Event schema, WebhookTest included', async () => {
    const rows = await server.deps.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.webhookId, webhookId))
      .orderBy(asc(webhookDeliveries.createdAt), asc(webhookDeliveries.id))
    const types = new Set<string>()
    for (const row of rows) {
      const validate = validatorOf(row.eventType, 'body')
      assert.ok(
        validate(row.payload),
        `${row.eventType} ${JSON.stringify(row.payload)}: ${ajv.errorsText(validate.errors)}`,
      )
      types.add(row.eventType)
    }
    for (const type of [
      'UserSignup',
      'UserLogin',
      'UserLoginFailed',
      'UserUpdated',
      WEBHOOK_TEST,
    ]) {
      assert.ok(types.has(type), `${type} queued`)
    }
    // A body that breaks its schema is refused: the check above can fail.
    const [first] = rows
    const broken = structuredClone(first.payload) as any
    broken.data.event.metadata = { ...broken.data.event.metadata, notAField: 1 }
    broken.data.event.action = 'Other'
    assert.equal(validatorOf(first.eventType, 'body')(broken), false)
  })
})
