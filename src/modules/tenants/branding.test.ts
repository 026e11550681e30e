// A tenant's branding (CONTRACT §20) over real HTTP: PATCH tenant `branding` stores and shows
// it, null removes it, TenantUpdated names it (never the CSS itself); a primary colour under
// 4.5:1 against white is 400 `insufficient_contrast`, CSS that could load from elsewhere or
// end the stylesheet, a link that is not https and a bad colour are 400 `validation`, each
// with nothing changed. The hosted pages load the tenant's stylesheet from this service
// (the CSP's `style-src 'self'` unchanged), carry `data-theme`, the favicon, the dark logo's
// origin in `img-src` and the links; another tenant's pages stay as they were. Mails get the
// colour and the links, in the mail's language.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { auditMark, auditSince, unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  createTenant,
  randomIp,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'
import { SmtpSink } from '../../../test/smtp-sink.ts'
import { PageClient } from '../../../test/web/page-client.ts'
import { CUSTOM_CSS_MAX, contrastWithWhite } from './branding.ts'

let server: TestServer
let sink: SmtpSink
before(async (ctx) => {
  sink = await new SmtpSink().start()
  server = await startTestServer(ctx, { smtpUrl: sink.url })
})
after(() => sink.stop())

const patchTenant = (t: TenantFixture, body: unknown) =>
  server.request('PATCH', `/v1/${t.slug}/tenant`, body, { token: t.admin.accessToken })

const BRANDING = {
  primaryColor: '#7A1FA2',
  backgroundColor: '#F6F1FA',
  darkMode: 'dark',
  darkLogoUrl: 'https://cdn.example.com/logo-dark.png',
  faviconUrl: 'https://icons.example.net/favicon.png',
  customCss:
    '.card { border-radius: 2px; } .brand { background: url("data:image/png;base64,AAAA"); }',
  privacyPolicyUrl: 'https://example.com/privacy',
  termsUrl: 'https://example.com/terms',
  supportEmail: 'help@example.com',
}

describe('PATCH tenant: branding', () => {
  test('stored and shown (colours lowercased, unset fields null); the same again is no change; null removes it; audited without the CSS', async () => {
    const t = await createTenant(server)
    const before = await server.request('GET', `/v1/${t.slug}/tenant`, undefined, {
      token: t.admin.accessToken,
    })
    assert.equal(before.body.branding, null)
    const mark = await auditMark(server, t.tenantId)
    const res = await patchTenant(t, {
      branding: { primaryColor: '#1F4FD1', termsUrl: BRANDING.termsUrl },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.branding, {
      primaryColor: '#1f4fd1',
      backgroundColor: null,
      darkMode: 'auto',
      darkLogoUrl: null,
      faviconUrl: null,
      customCss: null,
      privacyPolicyUrl: null,
      termsUrl: BRANDING.termsUrl,
      supportEmail: null,
    })
    const full = await patchTenant(t, { branding: BRANDING })
    assert.equal(full.status, 200, JSON.stringify(full.body))
    assert.equal(full.body.branding.customCss, BRANDING.customCss)
    const events = await auditSince(server, t.tenantId, mark)
    assert.deepEqual(
      events.map((e) => e.action),
      ['TenantUpdated', 'TenantUpdated'],
    )
    const last = events[1].metadata as { fields: string[]; changes: { branding: { to: unknown } } }
    assert.deepEqual(last.fields, ['branding'])
    assert.ok(!JSON.stringify(last).includes('border-radius'), 'the CSS is not in the audit log')
    assert.equal(
      (last.changes.branding.to as { customCssChanged?: boolean }).customCssChanged,
      true,
    )
    const again = await auditMark(server, t.tenantId)
    assert.equal((await patchTenant(t, { branding: BRANDING })).status, 200)
    assert.equal((await auditSince(server, t.tenantId, again)).length, 0, 'no change, no row')
    const removed = await patchTenant(t, { branding: null })
    assert.equal(removed.status, 200)
    assert.equal(removed.body.branding, null)
  })

  test('a primary colour under 4.5:1 against white, or a background under 4.5:1 against the pages’ text, is 400 insufficient_contrast, nothing changed', async () => {
    const t = await createTenant(server)
    for (const colour of ['#ffff00', '#00c2ff', '#7f7f7f', '#FFFFFF']) {
      assert.ok(contrastWithWhite(colour) < 4.5, colour)
      const res = await unchanged(server, t.tenantId, () =>
        patchTenant(t, { branding: { primaryColor: colour } }),
      )
      expectError(res, 400, 'insufficient_contrast')
      assert.equal(res.body.details.issues[0].path, 'body.branding.primaryColor')
    }
    // The boundary: #767676 is 4.54:1, the lightest grey that passes.
    assert.equal((await patchTenant(t, { branding: { primaryColor: '#767676' } })).status, 200)
    // A background the pages' dark text cannot be read on.
    for (const colour of ['#000000', '#1f4fd1', '#555555']) {
      const res = await unchanged(server, t.tenantId, () =>
        patchTenant(t, { branding: { primaryColor: '#1f4fd1', backgroundColor: colour } }),
      )
      expectError(res, 400, 'insufficient_contrast')
      assert.equal(res.body.details.issues[0].path, 'body.branding.backgroundColor')
    }
  })

  test('CSS that loads from elsewhere or leaves the stylesheet, links that are not https, bad colours and shapes are 400 validation, nothing changed (an unknown field is dropped, as everywhere: CONTRACT §3)', async () => {
    const t = await createTenant(server)
    const css = (customCss: string) => ({ branding: { primaryColor: '#1f4fd1', customCss } })
    const bad: unknown[] = [
      css('@import "https://evil.example/x.css";'),
      css('@IMPORT url(x.css);'),
      css('.a { background: url(https://evil.example/pixel.png) }'),
      css(".a { background: url('//evil.example/p') }"),
      css('.a { background-image: image-set("https://evil.example/p.png" 1x) }'),
      css('@font-face { font-family: x; src: src("https://evil.example/f.woff") }'),
      css('.a { width: expression(alert(1)) }'),
      css('</style><script>alert(1)</script>'),
      css('.a { background: \\75 rl(https://evil.example/p) }'),
      css('x'.repeat(CUSTOM_CSS_MAX + 1)),
      { branding: { primaryColor: '#1f4fd1', termsUrl: 'http://example.com/terms' } },
      { branding: { primaryColor: '#1f4fd1', faviconUrl: 'javascript:alert(1)' } },
      { branding: { primaryColor: '#1f4fd1', darkLogoUrl: 'https://user:pw@example.com/l.png' } },
      { branding: { primaryColor: '#1f4fd1', faviconUrl: 'https://x;sandbox/i.png' } },
      { branding: { primaryColor: '#1f4fd1', faviconUrl: 'https://x,y/i.png' } },
      { branding: { primaryColor: '#1f4fd1', supportEmail: 'not an address' } },
      { branding: { primaryColor: 'blue' } },
      { branding: { primaryColor: '#12345' } },
      { branding: { primaryColor: '#1f4fd1', backgroundColor: '#ggg000' } },
      { branding: { primaryColor: '#1f4fd1', darkMode: 'night' } },
      { branding: {} },
      { branding: 'purple' },
    ]
    for (const body of bad) {
      const res = await unchanged(server, t.tenantId, () => patchTenant(t, body))
      expectError(res, 400, 'validation')
    }
  })

  test('only with tenant:write: a Member is 403, nothing changed', async () => {
    const t = await createTenant(server)
    const member = await signup(server, t.slug)
    const res = await unchanged(server, t.tenantId, () =>
      server.request(
        'PATCH',
        `/v1/${t.slug}/tenant`,
        { branding: BRANDING },
        {
          token: member.accessToken,
        },
      ),
    )
    assert.equal(res.status, 403)
  })
})

describe('the hosted pages and mails of a branded tenant', () => {
  test("the stylesheet of the service's own origin, data-theme, favicon, the dark logo's origin in img-src alone, the links; another tenant unchanged", async () => {
    const t = await createTenant(server)
    const other = await createTenant(server)
    assert.equal((await patchTenant(t, { branding: BRANDING })).status, 200)
    const page = await new PageClient(server).get(`/t/${t.slug}/sign-in?lang=de`)
    assert.equal(page.status, 200)
    assert.match(page.html, /<html[^>]* data-theme="dark"/)
    const sheet = /<link rel="stylesheet" href="(\/t\/[^"]+\/branding\.css\?v=[\w-]+)">/.exec(
      page.html,
    )?.[1]
    assert.ok(sheet, 'the branding stylesheet is linked')
    assert.match(page.html, /<link rel="icon" href="https:\/\/icons\.example\.net\/favicon\.png">/)
    assert.match(page.html, /<img src="https:\/\/cdn\.example\.com\/logo-dark\.png"/)
    assert.match(page.html, /href="https:\/\/example\.com\/privacy">Datenschutzerklärung</)
    assert.match(page.html, /href="mailto:help@example\.com">Hilfe: help@example\.com</)
    const csp = page.headers.get('content-security-policy') ?? ''
    assert.match(csp, /style-src 'self'(;|$)/, 'no stylesheet from elsewhere')
    assert.match(
      csp,
      /img-src 'self' data: https:\/\/cdn\.example\.com https:\/\/icons\.example\.net(;|$)/,
    )
    const css = await server.request('GET', sheet)
    assert.equal(css.status, 200)
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/)
    assert.equal(css.headers.get('x-content-type-options'), 'nosniff')
    assert.match(css.body, /--accent: #7a1fa2;/)
    assert.match(css.body, /--bg: #f6f1fa;/)
    assert.ok(css.body.includes(BRANDING.customCss))
    // Another tenant: the pages as they were.
    const plain = await new PageClient(server).get(`/t/${other.slug}/sign-in`)
    assert.doesNotMatch(plain.html, /branding\.css|data-theme|rel="icon"|site-links/)
    assert.match(plain.headers.get('content-security-policy') ?? '', /img-src 'self' data:;/)
    assert.equal((await server.request('GET', `/t/${other.slug}/branding.css`)).status, 404)
  })

  test('a mail carries the colour and the links, in the mail’s language', async () => {
    const t = await createTenant(server)
    assert.equal((await patchTenant(t, { branding: BRANDING })).status, 200)
    const person = await signup(server, t.slug)
    const asked = await server.request(
      'POST',
      `/v1/${t.slug}/auth/request-password-reset`,
      { email: person.email },
      { ip: randomIp(), headers: { 'accept-language': 'fr' } },
    )
    assert.equal(asked.status, 200, JSON.stringify(asked.body))
    const mail = await sink.waitFor(person.email)
    assert.match(mail.html, /background:#7a1fa2/)
    assert.match(
      mail.html,
      /href="https:\/\/example\.com\/privacy"[^>]*>Politique de confidentialité</,
    )
    assert.match(mail.text, /Conditions: https:\/\/example\.com\/terms/)
    assert.match(mail.text, /^Assistance : help@example\.com$/m)
  })
})
