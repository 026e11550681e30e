// examples/nextjs-authjs (CONTRACT §23): a Next.js application signing in with Auth.js
// through a tenant's OpenID provider, built and started as its README says (its own
// package.json: `npm ci`, `next build`, `next start`) and signed in to by Debian's Chromium.
// The first run installs and builds the example (a minute or two); later runs rebuild only
// when a file of the example is newer than its build.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { before, type TestContext, test } from 'node:test'
import type { Browser } from 'playwright-core'
import { inFreshBrowser, chromiumSkip as skip } from './fixtures/browser.ts'
import { EXAMPLES, type ExampleTenant, exampleTenant, serveExample } from './fixtures/examples.ts'
import { createApplication, signInOnSignInPage } from './fixtures/oidc.ts'
import { freePort } from './fixtures/ports.ts'
import { launchChromium } from './fixtures/secure-origin.ts'

const APP = join(EXAMPLES, 'nextjs-authjs')
const NEXT = join(APP, 'node_modules', 'next', 'dist', 'bin', 'next')

let live: ExampleTenant
let browser: Browser

/** The newest modification time of the example's own files (not its installs or build). */
function newestSource(dir = APP): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', '.next'].includes(entry.name)) continue
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs)
  }
  return newest
}

function step(command: string, args: string[]): void {
  const done = spawnSync(command, args, { cwd: APP, encoding: 'utf8', env: process.env })
  if (done.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} in ${APP}: ${done.status}\n${done.stdout}${done.stderr}`,
    )
  }
}

before(
  async (ctx) => {
    if (skip) return
    if (!existsSync(NEXT)) step('npm', ['ci', '--no-audit', '--no-fund'])
    const build = join(APP, '.next', 'BUILD_ID')
    if (!existsSync(build) || statSync(build).mtimeMs < newestSource()) {
      step(process.execPath, [NEXT, 'build'])
    }
    live = await exampleTenant(ctx as TestContext)
    browser = await launchChromium(ctx as TestContext)
  },
  { timeout: 900_000 },
)

test('examples/nextjs-authjs: the Next.js application signs the person in with Auth.js on the hosted page, shows the address and the user id, and signs out', {
  skip,
}, async (ctx) => {
  const { server, t, issuer, user } = live
  const port = await freePort()
  const site = `http://localhost:${port}`
  const made = await createApplication(server, t.slug, t.admin.accessToken, {
    name: 'Next.js app',
    type: 'web',
    redirectUris: [`${site}/api/auth/callback/tenant-auth`],
  })
  await serveExample(
    ctx,
    [NEXT, 'start', '--port', String(port), '--hostname', '127.0.0.1'],
    {
      AUTH_ISSUER: issuer,
      AUTH_CLIENT_ID: made.application.clientId,
      AUTH_CLIENT_SECRET: String(made.clientSecret),
      AUTH_SECRET: randomBytes(32).toString('base64url'),
      AUTH_URL: site,
      NODE_ENV: 'production',
    },
    port,
    APP,
  )
  await inFreshBrowser(browser, async (page) => {
    await page.goto(site)
    assert.equal(await page.locator('#who').textContent(), 'Not signed in')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await signInOnSignInPage(page, t.slug, user)
    await page.waitForURL(`${site}/`)
    assert.equal(await page.locator('#who').textContent(), `Signed in as ${user.email}`)
    assert.equal(await page.locator('#sub').textContent(), user.userId)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.locator('#who', { hasText: 'Not signed in' }).waitFor()
  })
})
