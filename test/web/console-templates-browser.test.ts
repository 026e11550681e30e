// The console's Mail templates page (CONTRACT §20, issue 31) in a real browser (Debian's
// Chromium through playwright-core) against the real app and a real SMTP sink, as an admin
// uses it: every kind listed with what it is for and the languages with the workspace's own
// wording; the password reset mail in German opens prefilled with the default wording, its
// sample values turned back into placeholders; a preview fills them and draws the HTML in a
// sandboxed frame with its styles and no script; a draft missing {{code}} and naming an
// unknown placeholder is refused beside both fields with nothing stored and no mail; the
// saved template is what the API lists and what a real reset mail in German says, sanitized;
// Reset to default, asked first, brings the default back (stored, and in a real mail). No
// CSP violation throughout. A Member whose role lacks tenant:write has no Mail templates
// entry; one whose role holds tenant:write alone (no tenant:read) edits in every locale.
// Every view is checked with axe-core, must not scroll sideways at phone width, and is
// photographed at desktop and phone widths into test-results/screenshots/.
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { unchanged } from '../db.ts'
import { expectError } from '../envelope.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, flagged, VIEWPORTS, visit } from '../fixtures/console.ts'
import {
  createTenant,
  randomIp,
  STRONG_PASSWORD,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../helpers.ts'
import { SmtpSink } from '../smtp-sink.ts'

let server: TestServer
let browser: Browser
let sink: SmtpSink

before(async (ctx) => {
  if (skip) return
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
  browser = await launchChromium()
  mkdirSync(RESULT_SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
  await sink?.stop()
})

async function api(tenant: TenantFixture, method: string, path: string, body?: unknown) {
  return server.request(method, `/v1/${tenant.slug}${path}`, body, {
    token: tenant.admin.accessToken,
  })
}

async function templates(tenant: TenantFixture) {
  const res = await api(tenant, 'GET', '/email-templates')
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body.items as { kind: string; locale: string; subject: string; html: string | null }[]
}

/** The reset mail a new user gets when the page asking for it is in German. */
async function germanResetMail(tenant: TenantFixture) {
  const user = await signup(server, tenant.slug)
  const res = await server.request(
    'POST',
    `/v1/${tenant.slug}/auth/request-password-reset`,
    { email: user.email },
    { ip: randomIp(), headers: { 'accept-language': 'de' } },
  )
  assert.equal(res.status, 200, JSON.stringify(res.body))
  await server.deps.mailer.drain()
  return { email: user.email, mail: await sink.waitFor(user.email) }
}

/** A console signed in as `email` (a Member of a custom role), on its first area. */
async function signIn(tenant: TenantFixture, email: string) {
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop })
  const page = await context.newPage()
  await page.goto(`${server.url}/console/?tenant=${tenant.slug}`)
  await page.getByLabel('Email address').fill(email)
  await page.getByLabel('Password').fill(STRONG_PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('navigation', { name: 'Console' }).waitFor()
  return { context, page }
}

const DEFAULT_SUBJECT_DE = 'Ihr Code zum Zurücksetzen des Passworts für'
const OWN = {
  subject: 'Neues Passwort für {{tenant.name}}',
  text: 'Hallo {{user.email}},\n\nIhr Code: {{code}}\n\nEr gilt {{expiresInMinutes}} Minuten.',
  html: '<h1 style="color:#0b6e4f">Hallo</h1><p>Code: <strong>{{ code }}</strong> für {{tenant.name}}</p><p><a href="https://globex.example/help">Hilfe</a></p><img src="https://globex.example/logo.png" alt="Globex-Logo"><script>document.title="pwned"</script>',
}

function cspWatch(page: Page): string[] {
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return problems
}

test('console mail templates: the default prefilled with placeholders, a preview filled and sandboxed, a bad draft refused by its fields with nothing stored, the saved wording is the real mail, reset asked first brings the default back; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Globex' })
  const { context, page } = await consoleOf(browser, server.url, tenant)
  const problems = cspWatch(page)
  try {
    await page.getByRole('link', { name: 'Mail templates', exact: true }).click()
    await page.getByRole('heading', { name: 'Mail templates', level: 1 }).waitFor()
    const mails = page.getByRole('table', { name: 'Mails' })
    await mails.getByRole('link', { name: 'Password reset' }).waitFor()
    assert.equal(await mails.getByRole('row').count(), 9, 'a header and the eight kinds')
    const resetRow = mails.getByRole('row').filter({ hasText: 'password_reset' })
    await resetRow.getByText('None: the default wording').waitFor()
    await resetRow.getByText('choose a new one').waitFor()
    await visit(page, 'console-templates')

    // The password reset mail in German: the default wording, its placeholders put back.
    await mails.getByRole('link', { name: 'Password reset' }).click()
    await page.getByRole('heading', { name: 'Password reset password_reset', level: 2 }).waitFor()
    await page.getByLabel('Language').selectOption('de')
    const subject = page.getByLabel('Subject')
    const text = page.getByLabel('Text', { exact: true })
    const html = page.getByLabel('HTML (optional)')
    await page.waitForFunction(
      (start) =>
        (document.getElementById('mail-subject') as HTMLInputElement)?.value.startsWith(start),
      DEFAULT_SUBJECT_DE,
    )
    assert.equal(await subject.inputValue(), `${DEFAULT_SUBJECT_DE} {{tenant.name}}`)
    const prefilled = await text.inputValue()
    assert.match(prefilled, /^Ihr Code: \{\{code\}\}\n/)
    assert.match(prefilled, /Passwort für \{\{tenant\.name\}\} zu wählen/)
    assert.match(prefilled, /läuft in \{\{expiresInMinutes\}\} Minuten ab/)
    assert.match(await html.inputValue(), /<strong>\{\{code\}\}<\/strong>/)
    const placeholders = page.getByRole('region', { name: 'Placeholders' })
    await placeholders
      .getByRole('listitem')
      .filter({ hasText: '{{code}}' })
      .getByText('required')
      .waitFor()
    await placeholders.getByText('{{user.email}}').waitFor()
    assert.equal(await placeholders.getByText('required', { exact: true }).count(), 1)
    assert.deepEqual(await templates(tenant), [], 'opening the editor stores nothing')
    await visit(page, 'console-template-default')

    // The own wording previewed: every placeholder filled, the HTML drawn in a frame that
    // runs nothing, its styles applied, its images not loaded, its links inert.
    await subject.fill(OWN.subject)
    await text.fill(OWN.text)
    await html.fill(OWN.html)
    await page.getByText('Unsaved changes.').waitFor()
    await page.getByRole('button', { name: 'Preview' }).click()
    const shown = page.getByTestId('preview-subject')
    await shown.getByText('Neues Passwort für Globex', { exact: true }).waitFor()
    const sample = (await page.getByTestId('preview-text').textContent()) ?? ''
    assert.match(sample, /^Hallo \S+@\S+,\n\nIhr Code: \d{6}\n\nEr gilt 10 Minuten\.$/)
    assert.doesNotMatch(sample, /\{\{/)
    const frameElement = page.getByTitle('The HTML part of the mail')
    assert.equal(await frameElement.getAttribute('sandbox'), 'allow-same-origin')
    const frame = page.frameLocator('iframe[title="The HTML part of the mail"]')
    const heading = frame.getByRole('heading', { name: 'Hallo' })
    await page.waitForFunction(() => {
      const doc = document.querySelector('iframe')?.contentDocument
      const h1 = doc?.querySelector('h1')
      return h1 ? getComputedStyle(h1).color === 'rgb(11, 110, 79)' : false
    })
    assert.equal(await heading.count(), 1)
    assert.match((await frame.locator('strong').textContent()) ?? '', /^\d{6}$/)
    assert.equal(await frame.locator('script').count(), 0, 'sanitized by the service')
    assert.equal(await frame.getByRole('img', { name: 'Globex-Logo' }).getAttribute('src'), null)
    await frame.getByRole('link', { name: 'Hilfe' }).click()
    assert.equal(
      await page.evaluate(() => document.querySelector('iframe')?.contentWindow?.location.href),
      'about:srcdoc',
      'a link in the preview goes nowhere',
    )
    assert.notEqual(await page.title(), 'pwned')
    await visit(page, 'console-template-preview')

    // Without {{code}} in the text and with a placeholder the kind does not fill: both
    // fields say so, nothing is stored and no mail is sent.
    await subject.fill('Neues Passwort {{coupon}}')
    await text.fill('Hallo {{user.email}}, Ihr neues Passwort wartet.')
    await unchanged(
      server,
      tenant.tenantId,
      async () => {
        await page.getByRole('button', { name: 'Save' }).click()
        await page.getByText('must contain {{code}}').waitFor()
      },
      { sink },
    )
    await flagged(text, 'must contain {{code}} (password_reset)')
    await flagged(subject, 'unknown placeholder {{coupon}} for password_reset')
    assert.equal(await html.getAttribute('aria-invalid'), null, 'the HTML holds {{code}}')
    await page.getByText('Some fields need a change').waitFor()
    assert.deepEqual(await templates(tenant), [])
    await visit(page, 'console-template-errors')

    // Saved: stored as the API lists it (the script removed), and a real reset mail in
    // German says it, the code in the HTML's <strong>.
    await subject.fill(OWN.subject)
    await text.fill(OWN.text)
    await page.getByRole('button', { name: 'Save' }).click()
    await page
      .getByRole('status')
      .filter({
        hasText: 'Saved: Password reset mails in Deutsch (de) now go out in this wording.',
      })
      .getByText('The HTML was sanitized', { exact: false })
      .waitFor()
    assert.equal(await subject.getAttribute('aria-invalid'), null)
    const [stored, ...others] = await templates(tenant)
    assert.deepEqual(others, [])
    assert.equal(stored?.kind, 'password_reset')
    assert.equal(stored?.locale, 'de')
    assert.equal(stored?.subject, OWN.subject)
    assert.doesNotMatch(stored?.html ?? '', /script|pwned/)
    assert.match(stored?.html ?? '', /<strong>\{\{ code \}\}<\/strong>/)
    assert.equal(await html.inputValue(), stored?.html, 'the HTML field shows what is stored')
    const { email, mail } = await germanResetMail(tenant)
    assert.equal(mail.subject, 'Neues Passwort für Globex')
    const code = SmtpSink.code(mail)
    assert.equal(mail.text.trim(), `Hallo ${email},\n\nIhr Code: ${code}\n\nEr gilt 10 Minuten.`)
    assert.match(mail.html, new RegExp(`<strong>${code}</strong>`))
    assert.doesNotMatch(mail.html, /<script/)
    const audit = await api(tenant, 'GET', '/audit?action=EmailTemplateUpdated&limit=10')
    assert.equal(audit.body.items.length, 1)

    // The list names the language with the workspace's own wording.
    await page.getByRole('link', { name: 'All mails' }).click()
    await resetRow.getByText('Deutsch (de)').waitFor()
    await visit(page, 'console-templates-own')

    // Reset to default, asked first: nothing is deleted until Yes.
    await mails.getByRole('link', { name: 'Password reset' }).click()
    await page.getByLabel('Language').selectOption('de')
    await page.getByText('Your own wording in Deutsch (de), saved').waitFor()
    await page.getByRole('button', { name: 'Reset to default' }).click()
    await page
      .getByText('Delete your own wording in Deutsch (de)? The default is sent again.')
      .waitFor()
    await page.getByRole('button', { name: 'No', exact: true }).click()
    assert.equal((await templates(tenant)).length, 1, 'No keeps it')
    await page.getByRole('button', { name: 'Reset to default' }).click()
    await visit(page, 'console-template-reset-asked')
    await page.getByRole('button', { name: 'Yes', exact: true }).click()
    await page
      .getByRole('status')
      .getByText('Reset: Password reset mails in Deutsch (de) go out in the default wording again.')
      .waitFor()
    assert.deepEqual(await templates(tenant), [])
    await page.waitForFunction(
      (start) =>
        (document.getElementById('mail-subject') as HTMLInputElement)?.value.startsWith(start),
      DEFAULT_SUBJECT_DE,
    )
    assert.equal(await page.getByRole('button', { name: 'Reset to default' }).count(), 0)
    const again = await germanResetMail(tenant)
    assert.equal(again.mail.subject, `${DEFAULT_SUBJECT_DE} Globex`)
    const reset = await api(tenant, 'GET', '/audit?action=EmailTemplateUpdated&limit=10')
    assert.equal(reset.body.items.length, 2)
    assert.deepEqual(problems, [], 'no CSP violation, no script error')
  } finally {
    await context.close()
  }
})

test('console mail templates: only a role holding tenant:write has the entry; tenant:write without tenant:read edits in every locale', {
  skip,
}, async () => {
  // A slug without digits: a security alert leaves out every line with six digits in a row
  // (notifications/security.ts), its account link included, which a random slug may hold.
  const letters = randomBytes(5)
    .toString('hex')
    .replace(/\d/g, (d) => 'ghijklmnop'[Number(d)] ?? '')
  const tenant = await createTenant(server, { name: 'Initech', slug: `initech-${letters}` })
  const reader = await signup(server, tenant.slug)
  const writer = await signup(server, tenant.slug)
  for (const [name, permissions, user] of [
    ['Support', ['users:read', 'tenant:read'], reader],
    ['Copywriter', ['tenant:write'], writer],
  ] as const) {
    const role = await api(tenant, 'POST', '/roles', { name, permissions })
    assert.equal(role.status, 200, JSON.stringify(role.body))
    const given = await api(tenant, 'PUT', `/users/${user.user.id}/roles`, { roles: [name] })
    assert.equal(given.status, 200, JSON.stringify(given.body))
  }

  // Without tenant:write: no entry, #emails opens the first area instead, the API refuses.
  const asReader = await signIn(tenant, reader.email)
  try {
    const { page } = asReader
    await page.getByRole('link', { name: 'Users', exact: true }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'Mail templates' }).count(), 0)
    await page.evaluate(() => {
      window.location.hash = '#emails?kind=password_reset'
    })
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor()
    assert.equal(await page.getByRole('heading', { name: 'Mail templates' }).count(), 0)
    const refused = await server.request('GET', `/v1/${tenant.slug}/email-templates`, undefined, {
      token: reader.accessToken,
    })
    expectError(refused, 403, 'permission_required')
  } finally {
    await asReader.context.close()
  }

  // tenant:write alone: the entry, and the languages of GET email-templates (GET tenant is
  // refused without tenant:read).
  const asWriter = await signIn(tenant, writer.email)
  try {
    const { page } = asWriter
    await page.getByRole('link', { name: 'Mail templates', exact: true }).click()
    // Settings reads the tenant (tenant:read): without it, no entry that could not load.
    assert.equal(await page.getByRole('link', { name: 'Settings', exact: true }).count(), 0)
    await page.getByRole('link', { name: 'Sign-in code' }).click()
    await page.getByRole('heading', { name: 'Sign-in code login_code', level: 2 }).waitFor()
    const options = await page.getByLabel('Language').locator('option').count()
    assert.equal(options, 11, 'every supported locale')
    await page.waitForFunction(() =>
      (document.getElementById('mail-text') as HTMLTextAreaElement)?.value.includes('{{code}}'),
    )
    await visit(page, 'console-template-writer')

    // A default holding more than placeholders fills (an alert's time and address, an
    // invitation's token and date) is prefilled too, and says what is left to replace.
    const kinds = [
      [
        'Security alert',
        'security_alert',
        'The default also says when it happened',
        'Security alert: {{event}} ({{tenant.name}})',
      ],
      [
        'Workspace invitation',
        'invitation',
        'The default also shows the invitation’s token',
        'You are invited to {{tenant.name}}',
      ],
    ] as const
    for (const [label, kind, beyond, subject] of kinds) {
      await page.getByRole('link', { name: 'All mails' }).click()
      await page.getByRole('link', { name: label, exact: true }).click()
      await page.getByRole('heading', { name: `${label} ${kind}`, level: 2 }).waitFor()
      await page.getByText(beyond).waitFor()
      await page.waitForFunction(() =>
        (document.getElementById('mail-text') as HTMLTextAreaElement)?.value.includes('{{link}}'),
      )
      assert.equal(await page.getByLabel('Subject').inputValue(), subject)
      const html = await page.getByLabel('HTML (optional)').inputValue()
      assert.match(html, kind === 'invitation' ? /href="\{\{link\}\}"/ : /<p>\{\{link\}\}<\/p>/)
      await visit(page, `console-template-${kind}`)
    }
  } finally {
    await asWriter.context.close()
  }
})
