// The console's SSO page (CONTRACT §12) in a real browser (Debian's Chromium through
// playwright-core) against the real app, as an admin uses it: bad input is shown at the field
// the API names (a one-label domain, empty OIDC fields, a domain another connection owns,
// a certificate that is none) and changes nothing; an OIDC connection is created and shows
// the redirect URI to copy; a SAML one is created from pasted IdP metadata and shows the SP
// entity ID, ACS URL and metadata URL to copy; an edit keeps the client secret unless a new
// one is typed, and new metadata replaces a SAML IdP's fields; disable; delete after
// confirmation; "Test this connection" runs the OIDC round trip in a new tab against a real
// OpenID provider (test/oidc-provider.ts) and ends signed in. Every view is checked with axe-core,
// must not scroll sideways at phone width, and is photographed at desktop and phone widths
// (into SCREENSHOT_DIR, else test-results/screenshots/).
// Needs /usr/bin/chromium (`apt-get install -y chromium`); skipped without it.
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { Browser, Locator, Page } from 'playwright-core'
import { and, eq } from '../../src/db/orm.ts'
import { ssoConnections } from '../../src/db/schema.ts'
import { unchanged } from '../db.ts'
import { launchChromium, RESULT_SHOTS, chromiumSkip as skip } from '../fixtures/browser.ts'
import { consoleOf, descriptionOf, visit } from '../fixtures/console.ts'
import { createTenant, startTestServer, type TenantFixture, type TestServer } from '../helpers.ts'
import { type OidcProviderFixture, startOidcProvider } from '../oidc-provider.ts'

const SHOTS = process.env.SCREENSHOT_DIR ?? RESULT_SHOTS
const CERT = readFileSync(
  new URL('../fixtures/sso/idp-signing.pem', import.meta.url),
  'utf8',
).trim()
const CERT_BODY = CERT.replace(/-----[A-Z ]+-----|\s/g, '')

/** An IdP's metadata as Entra ID or Okta offer it for download. */
const METADATA = `<?xml version="1.0"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://idp.initech.example/saml">
  <md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing"><ds:KeyInfo xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:X509Data><ds:X509Certificate>
${CERT_BODY}
    </ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="https://idp.initech.example/sso"/>
  </md:IDPSSODescriptor>
</md:EntityDescriptor>`

let server: TestServer
let browser: Browser
let idp: OidcProviderFixture
/** PUBLIC_URL: Chromium resolves auth.test to the test server. */
const origin = 'http://auth.test'

before(async (ctx) => {
  if (skip) return
  // The OIDC test IdP is on loopback: the egress rule lets the service reach it only so.
  server = await startTestServer(ctx, { webhookAllowPrivate: true })
  idp = await startOidcProvider()
  browser = await launchChromium(new URL(server.url).port)
  mkdirSync(SHOTS, { recursive: true })
})

after(async () => {
  await browser?.close()
  await idp?.close()
})

/** The field is marked invalid and its description carries `text`. */
async function flagged(field: Locator, text: string | RegExp): Promise<void> {
  assert.equal(await field.getAttribute('aria-invalid'), 'true')
  const said = await descriptionOf(field)
  assert.ok(typeof text === 'string' ? said.includes(text) : text.test(said), said)
}

/** Clicks the copy button named `name` and answers what it put on the clipboard. */
async function copied(page: Page, name: string): Promise<string> {
  const button = page.getByRole('button', { name, exact: true })
  await button.click()
  await page.waitForFunction(
    (label) =>
      [...document.querySelectorAll('button')].some(
        (b) => b.textContent?.startsWith('Copied') && b.textContent.includes(label),
      ),
    name.replace(/^Copy /, ''),
  )
  return page.evaluate(() => navigator.clipboard.readText())
}

async function getJson(tenant: TenantFixture, path: string) {
  return server.request('GET', `/v1/${tenant.slug}${path}`, undefined, {
    token: tenant.admin.accessToken,
  })
}

/** The sealed client secret as stored: equal before and after means it was kept. */
async function sealedSecret(tenant: TenantFixture, id: string): Promise<string | null> {
  const [row] = await server.deps.db
    .select({ enc: ssoConnections.oidcClientSecretEnc })
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, tenant.tenantId), eq(ssoConnections.id, id)))
  return row?.enc ?? null
}

test('console SSO: bad input shown at the field the API names and nothing changed; an OIDC connection shows its redirect URI and a SAML one made from pasted metadata its SP entity ID, ACS and metadata URLs, each copied; an edit keeps the secret unless a new one is typed; the organization its sign-ins join chosen and cleared; disable; delete after confirmation; axe clean, no view wider than a phone', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Initech' })
  const organization = await server.request(
    'POST',
    `/v1/${tenant.slug}/organizations`,
    { name: 'Initech Labs' },
    { token: tenant.admin.accessToken },
  )
  assert.equal(organization.status, 200, JSON.stringify(organization.body))
  const labs = organization.body.organization.id as string
  const { context, page } = await consoleOf(browser, server.url, tenant)
  try {
    await page.getByRole('link', { name: 'SSO', exact: true }).click()
    await page.getByRole('heading', { name: 'SSO', level: 1 }).waitFor()
    await page.getByText('No SSO connections yet').waitFor()
    await visit(page, 'console-sso-empty', SHOTS)

    // Nothing but a name: the API's messages at the domains and the OIDC fields.
    const domains = page.getByLabel('Email domains')
    const issuer = page.getByLabel('Issuer URL')
    const clientId = page.getByLabel('Client ID')
    const secret = page.getByLabel('Client secret')
    await page.getByLabel('Name', { exact: true }).fill('Okta')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create connection' }).click()
      await page.locator('.field-error').first().waitFor()
    })
    for (const field of [domains, issuer, clientId, secret]) await flagged(field, 'Required.')
    assert.equal(await page.getByLabel('Scopes').getAttribute('aria-invalid'), null)
    await visit(page, 'console-sso-invalid', SHOTS)

    // A one-label domain on the second line: the message names that line; nothing changed.
    await issuer.fill('https://initech.okta.example')
    await clientId.fill('0oa-initech')
    await secret.fill('first-secret-value')
    await domains.fill('Initech.EXAMPLE\nlocalhost')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create connection' }).click()
      await page.getByText('Line 2: not a domain name').waitFor()
    })
    await flagged(domains, 'Line 2: not a domain name of two labels or more')
    assert.equal(await issuer.getAttribute('aria-invalid'), null, 'the issuer is right now')
    assert.equal((await getJson(tenant, '/sso-connections')).body.items.length, 0)

    // Created, enforced: its page shows the redirect URI to register at the IdP.
    await domains.fill('Initech.EXAMPLE\ninitech-labs.example')
    await page.getByLabel(/^Enforce:/).check()
    await page.getByRole('button', { name: 'Create connection' }).click()
    await page.getByRole('heading', { name: 'Okta', level: 2 }).waitFor()
    const [oidc] = (await getJson(tenant, '/sso-connections')).body.items
    assert.equal(oidc.type, 'oidc')
    assert.deepEqual(oidc.domains, ['initech.example', 'initech-labs.example'])
    assert.equal(oidc.enforce, true)
    assert.equal(oidc.enabled, true)
    assert.equal(oidc.hasClientSecret, true)
    assert.equal(oidc.oidc.issuer, 'https://initech.okta.example')
    assert.equal(
      oidc.oidc.redirectUri,
      `http://auth.test/v1/${tenant.slug}/sso/${oidc.id}/oidc/callback`,
    )
    assert.equal(await copied(page, 'Copy Redirect URI'), oidc.oidc.redirectUri)
    assert.ok(!(await page.content()).includes('first-secret-value'))
    const testLink = page.getByRole('link', { name: /^Test this connection/ })
    assert.equal(await testLink.getAttribute('href'), `/t/${tenant.slug}/sso/${oidc.id}`)
    assert.equal(await testLink.getAttribute('target'), '_blank')
    await visit(page, 'console-sso-oidc', SHOTS)

    // An edit without a secret keeps the stored one; a new secret replaces it.
    const sealed = await sealedSecret(tenant, oidc.id)
    await page.getByLabel('Name', { exact: true }).fill('Okta (Initech)')
    await page.getByLabel('Scopes').fill('openid email profile groups')
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('Saved.').waitFor()
    await page.getByRole('heading', { name: 'Okta (Initech)', level: 2 }).waitFor()
    const edited = (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection
    assert.deepEqual(edited.oidc.scopes, ['openid', 'email', 'profile', 'groups'])
    assert.equal(edited.enforce, true, 'untouched settings stay')
    assert.equal(await sealedSecret(tenant, oidc.id), sealed, 'the secret was kept')
    await page.getByLabel('Client secret').fill('second-secret-value')
    await page.getByRole('button', { name: 'Save connection' }).click()
    // The form starts afresh from the saved record: the secret field is empty again.
    await page.waitForFunction(
      () => (document.querySelector('input[type=password]') as HTMLInputElement)?.value === '',
    )
    await page.getByText('Saved.').waitFor()
    assert.notEqual(await sealedSecret(tenant, oidc.id), sealed, 'a new secret replaced it')

    // The role mapping (CONTRACT §17): an unknown role named at the field, then saved.
    const made = await server.request(
      'POST',
      `/v1/${tenant.slug}/roles`,
      { name: 'Engineers', permissions: ['audit:read'] },
      { token: tenant.admin.accessToken },
    )
    assert.equal(made.status, 200, JSON.stringify(made.body))
    const mapping = page.getByLabel('Role mapping')
    await mapping.fill('groups=eng: Engineers, Nobody')
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('unknown role Nobody').waitFor()
    assert.equal(await mapping.getAttribute('aria-invalid'), 'true')
    assert.deepEqual(
      (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection.roleMapping,
      [],
    )
    await visit(page, 'console-sso-role-mapping-invalid', SHOTS)
    await mapping.fill('groups=eng: Engineers')
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('Saved.').waitFor()
    assert.deepEqual(
      (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection.roleMapping,
      [{ claim: 'groups', value: 'eng', roles: ['Engineers'] }],
    )
    assert.equal(await mapping.inputValue(), 'groups=eng: Engineers')

    // The organization its sign-ins join (CONTRACT §18): chosen, shown by name; then none.
    const picker = page.getByLabel('Organization', { exact: true })
    assert.equal(await picker.inputValue(), '')
    await picker.selectOption({ label: 'Initech Labs' })
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByRole('link', { name: 'Initech Labs' }).waitFor()
    assert.equal(
      (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection.organizationId,
      labs,
    )
    await visit(page, 'console-sso-organization', SHOTS)
    await picker.selectOption({ label: 'None' })
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByRole('link', { name: 'Initech Labs' }).waitFor({ state: 'detached' })
    assert.equal(
      (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection.organizationId,
      null,
    )

    // Disable, then the list shows it disabled and enforced.
    await page.getByRole('button', { name: 'Disable', exact: true }).click()
    await page.getByRole('button', { name: 'Enable', exact: true }).waitFor()
    assert.equal(await testLink.count(), 0, 'a disabled connection has nothing to test')
    await visit(page, 'console-sso-oidc-disabled', SHOTS)
    assert.equal(
      (await getJson(tenant, `/sso-connections/${oidc.id}`)).body.connection.enabled,
      false,
    )
    await page.getByRole('link', { name: 'All connections' }).click()
    const oidcRow = page.getByRole('row').filter({ hasText: 'Okta (Initech)' })
    await oidcRow.waitFor()
    assert.deepEqual(await oidcRow.getByRole('cell').allTextContents(), [
      'Okta (Initech)',
      'OpenID Connect',
      'initech.example, initech-labs.example',
      'No',
      'Yes',
    ])

    // SAML over a domain the OIDC connection owns: 409 domain_taken at the domains.
    await page.getByLabel('Name', { exact: true }).fill('Entra ID')
    await page.getByLabel('SAML 2.0').check()
    const xml = page.getByLabel('IdP metadata XML')
    await xml.fill(METADATA)
    await domains.fill('initech.example')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create connection' }).click()
      await page.locator('.field-error').waitFor()
    })
    await flagged(domains, /domain/i)
    assert.equal(await xml.getAttribute('aria-invalid'), null)

    // Metadata that is not XML: the message at the metadata; nothing changed.
    await domains.fill('initrode.example')
    await xml.fill('<html>not metadata</html>')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Create connection' }).click()
      await page.waitForFunction(
        () => document.querySelector('textarea.mono')?.getAttribute('aria-invalid') === 'true',
      )
    })
    assert.equal(await domains.getAttribute('aria-invalid'), null)
    await visit(page, 'console-sso-saml-invalid', SHOTS)

    // From the pasted metadata: its page shows the SP entity ID, ACS URL and metadata URL.
    await xml.fill(METADATA)
    await page.getByRole('button', { name: 'Create connection' }).click()
    await page.getByRole('heading', { name: 'Entra ID', level: 2 }).waitFor()
    const saml = (await getJson(tenant, '/sso-connections')).body.items.find(
      (c: { type: string }) => c.type === 'saml',
    )
    assert.equal(saml.saml.idpEntityId, 'https://idp.initech.example/saml')
    assert.equal(saml.saml.idpSsoUrl, 'https://idp.initech.example/sso')
    assert.deepEqual(saml.domains, ['initrode.example'])
    const root = `http://auth.test/v1/${tenant.slug}`
    assert.equal(saml.saml.spEntityId, `${root}/sso/${saml.id}`)
    assert.equal(saml.saml.acsUrl, `${root}/sso/${saml.id}/saml/acs`)
    assert.equal(saml.saml.metadataUrl, `${root}/sso-connections/${saml.id}/saml/metadata`)
    assert.equal(await copied(page, 'Copy SP entity ID'), saml.saml.spEntityId)
    assert.equal(await copied(page, 'Copy ACS URL'), saml.saml.acsUrl)
    assert.equal(await copied(page, 'Copy SP metadata URL'), saml.saml.metadataUrl)
    await visit(page, 'console-sso-saml', SHOTS)

    // Its fields, edited: a certificate that is none is named; nothing changed.
    const certs = page.getByLabel('IdP signing certificates')
    assert.equal((await certs.inputValue()).trim(), saml.saml.idpCertificates[0])
    await certs.fill('not a certificate')
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'Save connection' }).click()
      await page.getByText('Certificate 1: not an X.509 certificate in PEM').waitFor()
    })
    await flagged(certs, 'Certificate 1: not an X.509 certificate in PEM')
    await visit(page, 'console-sso-saml-edit-invalid', SHOTS)
    await certs.fill(CERT)
    await page.getByLabel('IdP sign-in URL').fill('https://idp.initech.example/sso/v2')
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('Saved.').waitFor()
    const samlEdited = (await getJson(tenant, `/sso-connections/${saml.id}`)).body.connection
    assert.equal(samlEdited.saml.idpSsoUrl, 'https://idp.initech.example/sso/v2')
    assert.equal(samlEdited.saml.idpEntityId, 'https://idp.initech.example/saml')

    // New metadata replaces the entity ID, sign-in URL and certificates whole.
    await page.getByLabel('Replace from new IdP metadata XML').check()
    await page
      .getByLabel('IdP metadata XML', { exact: true })
      .fill(METADATA.replaceAll('idp.initech.example', 'idp2.initech.example'))
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByLabel('IdP entity ID').waitFor()
    const replaced = (await getJson(tenant, `/sso-connections/${saml.id}`)).body.connection
    assert.equal(replaced.saml.idpEntityId, 'https://idp2.initech.example/saml')
    assert.equal(replaced.saml.idpSsoUrl, 'https://idp2.initech.example/sso')
    assert.equal(await page.getByLabel('IdP entity ID').inputValue(), replaced.saml.idpEntityId)

    // The list holds both; delete the SAML one after confirming.
    await page.getByRole('link', { name: 'All connections' }).click()
    await page.getByRole('row').filter({ hasText: 'Entra ID' }).waitFor()
    await visit(page, 'console-sso-list', SHOTS)
    await page.getByRole('link', { name: 'Entra ID' }).click()
    await page.getByRole('button', { name: 'Delete connection' }).click()
    await unchanged(server, tenant.tenantId, async () => {
      await page.getByRole('button', { name: 'No', exact: true }).click()
    })
    await page.getByRole('button', { name: 'Delete connection' }).click()
    await page.getByRole('button', { name: 'Yes', exact: true }).click()
    await page.getByRole('link', { name: 'Okta (Initech)' }).waitFor()
    assert.equal(await page.getByRole('link', { name: 'Entra ID' }).count(), 0)
    assert.equal((await getJson(tenant, `/sso-connections/${saml.id}`)).status, 404)
  } finally {
    await context.close()
  }
})

test('console SSO: "Test this connection" opens the sign-in round trip in a new tab: to the IdP and back, signed in to the hosted pages as the IdP’s user', {
  skip,
}, async () => {
  const tenant = await createTenant(server, { name: 'Umbrella' })
  const domain = `umbrella-${Date.now().toString(36)}.example`
  // At PUBLIC_URL, where the IdP sends the browser back: the cookies of the start page must
  // come back to the callback.
  const { context, page } = await consoleOf(browser, origin, tenant, { clipboard: false })
  try {
    // Created with the IdP's issuer; its redirect URI registered there; the client's
    // credentials typed in the settings.
    await page.getByRole('link', { name: 'SSO', exact: true }).click()
    await page.getByLabel('Name', { exact: true }).fill('Umbrella IdP')
    await page.getByLabel('Issuer URL').fill(idp.issuer)
    await page.getByLabel('Client ID').fill('pending')
    await page.getByLabel('Client secret').fill('pending')
    await page.getByLabel('Email domains').fill(domain)
    await page.getByRole('button', { name: 'Create connection' }).click()
    await page.getByRole('heading', { name: 'Umbrella IdP', level: 2 }).waitFor()
    const [{ id: connectionId }] = (await getJson(tenant, '/sso-connections')).body.items
    const redirectUri = await page.locator('.copyable code').textContent()
    assert.match(redirectUri ?? '', /\/oidc\/callback$/)
    const registered = await idp.addClient(redirectUri ?? '')
    await page.getByLabel('Client ID').fill(registered.clientId)
    await page.getByLabel('Client secret').fill(registered.clientSecret)
    await page.getByRole('button', { name: 'Save connection' }).click()
    await page.getByText('Saved.').waitFor()

    // The test opens a new tab that goes to the IdP. The IdP's login page is programmatic
    // (test/oidc-provider.ts): the fixture signs in from the authorization request the tab
    // made, and the tab follows the IdP's answer back.
    const toIdp: string[] = []
    context.on('request', (request) => {
      if (request.url().startsWith(`${idp.issuer}/auth`)) toIdp.push(request.url())
    })
    const [tab] = await Promise.all([
      context.waitForEvent('page'),
      page.getByRole('link', { name: /^Test this connection/ }).click(),
    ])
    await tab.waitForURL((url) => url.origin === idp.issuer)
    const authorization = toIdp[0] ?? ''
    assert.equal(new URL(authorization).searchParams.get('client_id'), registered.clientId)
    const who = { sub: `sub-${domain}`, email: `pat@${domain}`, email_verified: true }
    const back = await idp.authorize(authorization, who)
    await tab.goto(back.toString())
    await tab.waitForURL(`${origin}/t/${tenant.slug}/account`)
    await tab.getByText(who.email).first().waitFor()
    await tab.screenshot({ path: join(SHOTS, 'console-sso-tested-desktop.png'), fullPage: true })
    const logins = (await getJson(tenant, '/audit?action=UserLogin')).body.items
    assert.ok(
      logins.some(
        (e: { metadata: Record<string, unknown> }) =>
          e.metadata.method === 'sso' && e.metadata.connectionId === connectionId,
      ),
      JSON.stringify(logins),
    )

    // The admin's console is still signed in beside it.
    await page.getByRole('link', { name: 'All connections' }).click()
    await page.getByRole('link', { name: 'Umbrella IdP' }).waitFor()
  } finally {
    await context.close()
  }
})
