// Mail templates (CONTRACT §20) over real HTTP and a real SMTP sink: a tenant's template for
// (kind, locale) is what a recipient in that language gets, and not one in another; the
// security alert keeps its prefix; reset brings the default back; the preview renders a
// draft, the saved template and the default; every bad input is the documented 400 with
// nothing stored and no mail; the routes need tenant:write.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError, expectValidation } from '../../../test/envelope.ts'
import {
  auditActions,
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
  uniqueEmail,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { eq } from '../../db/orm.ts'
import { auditEvents } from '../../db/schema.ts'

let sink: SmtpSink
let server: TestServer
before(async (t) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(t, { smtpUrl: sink.url })
})
after(async () => {
  await sink.stop()
})

const admin = (tenant: TenantFixture) => ({ token: tenant.admin.accessToken as string })
const path = (tenant: TenantFixture, kind: string, locale: string) =>
  `/v1/${tenant.slug}/email-templates/${kind}/${locale}`

async function put(tenant: TenantFixture, kind: string, locale: string, body: unknown) {
  return server.request('PUT', path(tenant, kind, locale), body, admin(tenant))
}

async function saved(tenant: TenantFixture, kind: string, locale: string, body: unknown) {
  const res = await put(tenant, kind, locale, body)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.template
}

/** A user of `locale` (null: none), and the reset mail they are sent. */
async function resetMailOf(tenant: TenantFixture, locale: string | null, language?: string) {
  const user = await signup(server, tenant.slug, uniqueEmail(locale ?? 'plain'))
  if (locale) {
    const set = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/me`,
      { locale },
      {
        token: user.accessToken,
      },
    )
    assert.equal(set.status, 200, JSON.stringify(set.body))
  }
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/auth/request-password-reset`,
    { email: user.email },
    { ip: randomIp(), headers: language ? { 'accept-language': language } : {} },
  )
  assert.equal(res.status, 200)
  await server.deps.mailer.drain()
  return { user, mail: await sink.waitFor(user.email) }
}

const RESET_DE = {
  subject: 'Neues Passwort für {{tenant.name}}',
  text: 'Hallo {{user.email}},\n\nIhr Code: {{code}}\n\nEr gilt {{expiresInMinutes}} Minuten.',
  html: '<h1>Hallo</h1><p>Code: <strong>{{ code }}</strong> für {{tenant.name}}</p>',
}

describe('a tenant template is what the recipient gets', () => {
  test('in its locale, not in another; values filled and escaped in the HTML', async () => {
    const tenant = await createTenant(server, { name: 'Acme <b>&</b> Co' })
    const template = await saved(tenant, 'password_reset', 'de', RESET_DE)
    assert.equal(template.kind, 'password_reset')
    assert.equal(template.locale, 'de')
    assert.equal(template.html, RESET_DE.html)

    const { user, mail } = await resetMailOf(tenant, 'de')
    assert.equal(mail.subject, 'Neues Passwort für Acme <b>&</b> Co')
    const code = SmtpSink.code(mail)
    assert.equal(
      mail.text.trim(),
      `Hallo ${user.email},\n\nIhr Code: ${code}\n\nEr gilt 10 Minuten.`,
    )
    assert.match(mail.html, new RegExp(`<strong>${code}</strong>`))
    assert.match(mail.html, /für Acme &lt;b&gt;&amp;&lt;\/b&gt; Co/, 'the name escaped')
    assert.doesNotMatch(mail.html, /<b>/)

    // A French user (and one with no locale, in English) gets the catalogue's default.
    const fr = await resetMailOf(tenant, 'fr')
    assert.match(fr.mail.subject, /^Votre code de réinitialisation/)
    const plain = await resetMailOf(tenant, null)
    assert.match(plain.mail.subject, /^Your password reset code for /)
    // The requesting page's language picks the template too, for a user with no locale.
    const viaPage = await resetMailOf(tenant, null, 'de')
    assert.equal(viaPage.mail.subject, 'Neues Passwort für Acme <b>&</b> Co')
  })

  test('without html, the HTML part is drawn from the text, the link a link', async () => {
    const tenant = await createTenant(server)
    await saved(tenant, 'invitation', 'en', {
      subject: 'Join {{tenant.name}}',
      text: 'Hi {{user.email}},\n\nopen {{link}} within {{expiresInMinutes}} minutes.',
    })
    const email = uniqueEmail('invitee')
    const res = await server.request('POST', `/v1/${tenant.slug}/invites`, { email }, admin(tenant))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    await server.deps.mailer.drain()
    const mail = await sink.waitFor(email)
    assert.equal(mail.subject, `Join Tenant ${tenant.slug}`)
    const link = mail.text.match(/open (\S+) within 10080 minutes/)?.[1] ?? ''
    assert.match(link, new RegExp(`/t/${tenant.slug}/invite\\?token=`))
    assert.ok(mail.html.includes(`<a href="${link}">`), mail.html)
    // The invitation's token in the link accepts it.
    const token = new URL(link).searchParams.get('token')
    const accepted = await server.request('POST', '/v1/invites/accept', {
      token,
      password: 'quartz-harbor-lantern-58',
    })
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body))
  })

  test('an organization invitation in the inviting request’s language', async () => {
    const tenant = await createTenant(server)
    await saved(tenant, 'organization_invitation', 'fr', {
      subject: 'Rejoignez {{tenant.name}}',
      text: 'Bonjour {{user.email}}, ouvrez {{link}}',
    })
    const org = await server.request(
      'POST',
      `/v1/${tenant.slug}/organizations`,
      { name: 'Acme' },
      admin(tenant),
    )
    assert.equal(org.status, 200, JSON.stringify(org.body))
    const invite = async (language: string) => {
      const email = uniqueEmail(`org-${language}`)
      const res = await server.request(
        'POST',
        `/v1/${tenant.slug}/organizations/${org.body.organization.id}/invitations`,
        { email },
        { ...admin(tenant), headers: { 'accept-language': language } },
      )
      assert.equal(res.status, 200, JSON.stringify(res.body))
      await server.deps.mailer.drain()
      return { email, mail: await sink.waitFor(email) }
    }
    const fr = await invite('fr')
    assert.equal(fr.mail.subject, `Rejoignez Tenant ${tenant.slug}`)
    assert.match(
      fr.mail.text,
      new RegExp(`^Bonjour ${fr.email}, ouvrez \\S+/organization-invite\\?token=\\S+`),
    )
    const en = await invite('en')
    assert.notEqual(en.mail.subject, `Rejoignez Tenant ${tenant.slug}`, 'English: the default')
  })

  test('a security alert keeps its `Security alert:` prefix, with the event in it', async () => {
    const tenant = await createTenant(server)
    await saved(tenant, 'security_alert', 'en', {
      subject: '{{event}} at {{tenant.name}}',
      text: 'Heads up {{user.email}}: {{event}}. Review it at {{link}}',
    })
    const user = await signup(server, tenant.slug, uniqueEmail('alert'))
    const changed = await server.request(
      'PATCH',
      `/v1/${tenant.slug}/me/password`,
      { currentPassword: user.password, newPassword: 'quartz-harbor-lantern-58' },
      { token: user.accessToken, ip: randomIp() },
    )
    assert.equal(changed.status, 200, JSON.stringify(changed.body))
    await server.deps.mailer.drain()
    const mail = await sink.waitFor(user.email)
    assert.equal(mail.subject, `Security alert: your password was changed at Tenant ${tenant.slug}`)
    assert.equal(
      mail.text.trim(),
      `Heads up ${user.email}: your password was changed. Review it at http://localhost:3000/t/${tenant.slug}/account`.replace(
        'http://localhost:3000',
        server.deps.config.publicUrl,
      ),
    )
  })

  test('reset: DELETE brings the default back, audited; a second DELETE is 404', async () => {
    const tenant = await createTenant(server)
    await saved(tenant, 'password_reset', 'en', { ...RESET_DE, html: undefined })
    const del = await server.request(
      'DELETE',
      path(tenant, 'password_reset', 'en'),
      undefined,
      admin(tenant),
    )
    assert.equal(del.status, 200, JSON.stringify(del.body))
    assert.deepEqual(del.body, { ok: true })
    const { mail } = await resetMailOf(tenant, null)
    assert.match(mail.subject, /^Your password reset code for /)
    const again = await unchanged(server, tenant.tenantId, () =>
      server.request('DELETE', path(tenant, 'password_reset', 'en'), undefined, admin(tenant)),
    )
    expectError(again, 404, 'not_found')
    const events = await server.deps.db
      .select({ action: auditEvents.action, metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(eq(auditEvents.tenantId, tenant.tenantId))
    const mine = events
      .filter((e) => e.action === 'EmailTemplateUpdated')
      .map((e) => ({ ...(e.metadata as { change: string }), sanitized: undefined }))
      .sort((a, b) => b.change.localeCompare(a.change))
    assert.deepEqual(mine, [
      { kind: 'password_reset', locale: 'en', change: 'saved', sanitized: undefined },
      { kind: 'password_reset', locale: 'en', change: 'reset', sanitized: undefined },
    ])
  })
})

describe('the list and the preview', () => {
  test('the list shows the customised templates and each kind’s placeholders', async () => {
    const tenant = await createTenant(server)
    await saved(tenant, 'login_code', 'fr', { subject: 'Code', text: '{{code}}' })
    await saved(tenant, 'email_otp', 'de', { subject: 'Code', text: '{{code}}' })
    const res = await server.request(
      'GET',
      `/v1/${tenant.slug}/email-templates`,
      undefined,
      admin(tenant),
    )
    assert.equal(res.status, 200)
    assert.deepEqual(
      res.body.items.map((i: { kind: string; locale: string }) => `${i.kind}/${i.locale}`),
      ['email_otp/de', 'login_code/fr'],
    )
    const byKind = Object.fromEntries(res.body.kinds.map((k: { kind: string }) => [k.kind, k]))
    assert.equal(Object.keys(byKind).length, 8)
    assert.deepEqual(byKind.password_reset.required, ['code'])
    assert.deepEqual(byKind.magic_link.required, ['link'])
    assert.deepEqual(byKind.organization_invitation.required, ['link'])
    assert.deepEqual(byKind.security_alert.required, [])
    assert.ok(byKind.invitation.allowed.includes('expiresInMinutes'))
    assert.ok(!byKind.invitation.allowed.includes('code'))
    assert.ok(res.body.locales.includes('de'))
  })

  test('a draft, the saved template, else the default, rendered with sample values', async () => {
    const tenant = await createTenant(server)
    const preview = (body?: unknown) =>
      server.request('POST', `${path(tenant, 'login_code', 'de')}/preview`, body, admin(tenant))
    // No template: the default German mail, with a sample code.
    const byDefault = await preview()
    assert.equal(byDefault.status, 200, JSON.stringify(byDefault.body))
    assert.match(byDefault.body.subject, new RegExp(`Tenant ${tenant.slug}`))
    assert.match(byDefault.body.text, /^Ihr Code: \d{6}$/m)
    assert.match(byDefault.body.html, /<html/)

    // A draft is rendered, and not stored.
    const draft = await unchanged(server, tenant.tenantId, () =>
      preview({ subject: 'Hallo {{user.email}}', text: 'Code {{code}}', html: '<p>{{code}}</p>' }),
    )
    assert.equal(draft.status, 200, JSON.stringify(draft.body))
    assert.equal(draft.body.subject, 'Hallo user@example.com')
    assert.match(draft.body.text, /^Code \d{6}$/)
    assert.match(draft.body.html, /<p>\d{6}<\/p>/)

    // The saved one, with an empty body too.
    await saved(tenant, 'login_code', 'de', { subject: 'Gespeichert', text: 'Code: {{code}}' })
    const stored = await preview({})
    assert.equal(stored.body.subject, 'Gespeichert')
    assert.match(stored.body.html, /<p>Code: \d{6}<\/p>/)
  })

  test('magic_link previews a draft, and its default is the magic-link mail', async () => {
    const tenant = await createTenant(server)
    const url = `${path(tenant, 'magic_link', 'en')}/preview`
    const draft = await server.request(
      'POST',
      url,
      { subject: 'Sign in', text: 'Open {{link}} ({{expiresInMinutes}} minutes)' },
      admin(tenant),
    )
    assert.equal(draft.status, 200, JSON.stringify(draft.body))
    assert.match(draft.body.text, /^Open http\S+ \(15 minutes\)$/)
    const listed = await server.request(
      'GET',
      `/v1/${tenant.slug}/email-templates`,
      undefined,
      admin(tenant),
    )
    const magic = listed.body.kinds.find((k: { kind: string }) => k.kind === 'magic_link')
    assert.equal(magic.hasDefault, true)
    const preview = await server.request('POST', url, undefined, admin(tenant))
    assert.equal(preview.status, 200, JSON.stringify(preview.body))
    assert.equal(preview.body.subject, `Your sign-in link for Tenant ${tenant.slug}`)
    const link = `/t/${tenant.slug}/magic-link?token=sample-token`
    assert.ok(preview.body.text.includes(link), preview.body.text)
    assert.match(preview.body.text, /15 minutes/)
    assert.ok(preview.body.html.includes(`${link}"`), preview.body.html)
  })
})

describe('bad input: the documented 400, nothing stored, no mail', () => {
  const refused = async (
    tenant: TenantFixture,
    kind: string,
    locale: string,
    body: unknown,
    where?: string,
  ) => {
    for (const [method, url] of [
      ['PUT', path(tenant, kind, locale)],
      ['POST', `${path(tenant, kind, locale)}/preview`],
    ] as const) {
      const res = await unchanged(
        server,
        tenant.tenantId,
        () => server.request(method, url, body, admin(tenant)),
        { sink },
      )
      expectValidation(res, where)
    }
  }

  test('an unknown kind or locale', async () => {
    const tenant = await createTenant(server)
    const body = { subject: 'x', text: '{{code}}' }
    await refused(tenant, 'welcome', 'en', body, 'params.kind')
    await refused(tenant, 'login_code', 'xx', body, 'params.locale')
    await refused(tenant, 'login_code', 'de-DE', body, 'params.locale')
    const del = await unchanged(server, tenant.tenantId, () =>
      server.request('DELETE', path(tenant, 'login_code', 'xx'), undefined, admin(tenant)),
    )
    expectValidation(del, 'params.locale')
  })

  test('a missing required placeholder, or an unknown one, named in the issues', async () => {
    const tenant = await createTenant(server)
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'Code', text: 'no code here' },
      'body.text',
    )
    await refused(
      tenant,
      'magic_link',
      'en',
      { subject: 'Link', text: 'Code {{code}}' },
      'body.text',
    )
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'Code', text: '{{code}}', html: '<p>no code</p>' },
      'body.html',
    )
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: '{{password}}', text: '{{code}}' },
      'body.subject',
    )
    await refused(tenant, 'security_alert', 'en', { subject: 'x', text: '{{code}}' }, 'body.text')
    const res = await put(tenant, 'password_reset', 'en', {
      subject: 'x',
      text: '{{code}} {{user.name}}',
    })
    expectValidation(res, 'body.text')
    assert.match(JSON.stringify(res.body.details.issues), /\{\{user\.name\}\}/)
    // The code only inside a script, which sanitising removes, is a missing code.
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'x', text: '{{code}}', html: '<script>{{code}}</script><p>hi</p>' },
      'body.html',
    )
  })

  test('oversize, empty or multi-line fields', async () => {
    const tenant = await createTenant(server)
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'x'.repeat(201), text: '{{code}}' },
      'body.subject',
    )
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'x', text: `{{code}}${'y'.repeat(16 * 1024)}` },
      'body.text',
    )
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'x', text: '{{code}}', html: `<p>{{code}}</p>${'z'.repeat(32 * 1024)}` },
      'body.html',
    )
    await refused(tenant, 'login_code', 'en', { subject: '', text: '{{code}}' }, 'body.subject')
    await refused(
      tenant,
      'login_code',
      'en',
      { subject: 'a\nBcc: x@y', text: '{{code}}' },
      'body.subject',
    )
    const res = await unchanged(server, tenant.tenantId, () =>
      put(tenant, 'login_code', 'en', { subject: 'x' }),
    )
    expectValidation(res)
  })

  test('script, event handlers, javascript: URLs and forms are stripped and the rest accepted', async () => {
    const tenant = await createTenant(server)
    const html =
      '<p onclick="steal()">Code <b>{{code}}</b></p><script>alert(1)</script>' +
      '<a href="javascript:alert(1)">x</a><a href="https://example.com/help">ok</a>' +
      '<img src="https://cdn.example.com/logo.png" onerror="steal()">' +
      '<form action="https://evil.example"><input name="password"></form>' +
      '<p style="color:#336699;background-image:url(https://evil.example/t.gif)">styled</p>'
    const template = await saved(tenant, 'login_code', 'en', {
      subject: 'x',
      text: '{{code}}',
      html,
    })
    for (const gone of [
      /<script/,
      /alert\(1\)/,
      /onclick/,
      /onerror/,
      /javascript:/,
      /<form/,
      /<input/,
      /url\(/,
    ]) {
      assert.doesNotMatch(template.html, gone)
    }
    assert.match(template.html, /<b>\{\{code\}\}<\/b>/)
    assert.match(template.html, /<img src="https:\/\/cdn\.example\.com\/logo\.png" \/>/)
    assert.match(template.html, /style="color:#336699"/)
    const events = await server.deps.db
      .select({ metadata: auditEvents.metadata })
      .from(auditEvents)
      .where(eq(auditEvents.action, 'EmailTemplateUpdated'))
    assert.ok(events.some((e) => (e.metadata as { sanitized?: boolean }).sanitized === true))
  })
})

describe('who may', () => {
  test('a Member is 403 admin_required; a key without tenant:write 403 permission_required; another tenant’s admin 401', async () => {
    const tenant = await createTenant(server)
    const other = await createTenant(server)
    const member = await signup(server, tenant.slug)
    const key = await server.request(
      'POST',
      `/v1/${tenant.slug}/api-keys`,
      { name: 'reader', environment: 'live', permissions: ['users:read', 'tenant:read'] },
      admin(tenant),
    )
    assert.equal(key.status, 200, JSON.stringify(key.body))
    const body = { subject: 'x', text: '{{code}}' }
    for (const [method, url, sent] of [
      ['GET', `/v1/${tenant.slug}/email-templates`, undefined],
      ['PUT', path(tenant, 'login_code', 'en'), body],
      ['DELETE', path(tenant, 'login_code', 'en'), undefined],
      ['POST', `${path(tenant, 'login_code', 'en')}/preview`, body],
    ] as const) {
      await unchanged(server, tenant.tenantId, async () => {
        expectError(
          await server.request(method, url, sent, { token: member.accessToken }),
          403,
          'admin_required',
        )
        const byKey = await server.request(method, url, sent, { token: key.body.plaintext })
        expectError(byKey, 403, 'permission_required')
        assert.equal(byKey.body.details.permission, 'tenant:write')
        expectError(await server.request(method, url, sent, admin(other)), 401, 'token_invalid')
      })
    }
    const actions = await auditActions(server, tenant.tenantId)
    assert.ok(!actions.includes('EmailTemplateUpdated'))
  })
})
