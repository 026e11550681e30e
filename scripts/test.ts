// npm test: every test file, with node's test runner. DATABASE_URL and REDIS_URL choose
// the databases (unset: a fresh embedded PGlite per test server, in-memory rate limits).
import { spawnSync } from 'node:child_process'
import { globSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEMPLATE_ENV, writeTemplate } from '../test/pglite-template.ts'

// The fault suite starts and kills its own PostgreSQL and Redis (`npm run test:faults`), the
// topology suite its own deployment at scale (`npm run test:topology`).
const all = [
  ...globSync('src/**/*.test.ts'),
  ...globSync('test/**/*.test.ts', { exclude: ['test/faults/**', 'test/topology/**'] }),
  ...globSync('sdk/test/**/*.test.ts'),
].sort()
// The runner starts files in the order given, a few at a time: the longest start first, so
// that none of them begins near the end and runs on alone while the other slots are idle
// (the fuzz suite alone takes about a fifth of the run's time, and started in alphabetical
// order it ran on for minutes after everything else had finished). Longest first, as a
// TEST_REPORT of a whole run measured them; a file missing from the list keeps its place.
const LONGEST = [
  'test/fuzz.test.ts',
  'src/modules/webhooks/durability.test.ts',
  'test/process.test.ts',
  'test/web/browser.test.ts',
  'test/web/oidc-browser.test.ts',
  'test/examples-nextjs.test.ts',
  'test/web/oidc-logout.test.ts',
  'test/web/console-sso-browser.test.ts',
  'test/web/console-oidc-browser.test.ts',
  'test/web/screens-browser.test.ts',
  'test/web/console-webhooks-browser.test.ts',
  'test/web/console-standards-browser.test.ts',
  'test/web/console-apikeys-browser.test.ts',
  'test/web/oidc-device.test.ts',
  'test/examples.test.ts',
]
// Files whose verdict cannot depend on the store behind the service: PGlite is PostgreSQL
// itself, so what differs on a server is pooling, concurrency and Redis, and none of these
// files reaches either in a way of its own. They check the published document against the
// handlers (the fuzz suite), the docs and the tree, and what pages and the console draw. With
// TEST_STORE_NEUTRAL=skip (CI's second run, on PostgreSQL + Redis, after the first on PGlite
// ran them) they are left out; by default every file runs.
const STORE_NEUTRAL = [
  'test/fuzz.test.ts',
  'test/docs.test.ts',
  'test/docs-runnable.test.ts',
  'test/architecture.test.ts',
  'test/layout.test.ts',
  'test/hygiene.test.ts',
  'test/bench-compare.test.ts',
  'test/config-reference.test.ts',
  'test/openapi.test.ts',
  'test/examples-nextjs.test.ts',
  'test/web/screens-browser.test.ts',
  'test/web/landing-browser.test.ts',
  'test/web/console-oidc-browser.test.ts',
  'test/web/console-sso-browser.test.ts',
  'test/web/console-social-browser.test.ts',
  'test/web/console-webhooks-browser.test.ts',
  'test/web/console-roles-browser.test.ts',
  'test/web/console-standards-browser.test.ts',
  'test/web/console-apikeys-browser.test.ts',
  'test/web/console-templates-browser.test.ts',
  'sdk/test/build.test.ts',
]
// A list naming a file that has gone (renamed, split) would quietly stop doing its work.
const gone = [...LONGEST, ...STORE_NEUTRAL].filter((file) => !all.includes(file))
if (gone.length > 0) throw new Error(`scripts/test.ts names test files that do not exist: ${gone}`)
const chosen =
  process.env.TEST_STORE_NEUTRAL === 'skip'
    ? all.filter((file) => !STORE_NEUTRAL.includes(file))
    : all
const files = [
  ...LONGEST.filter((file) => chosen.includes(file)),
  ...chosen.filter((file) => !LONGEST.includes(file)),
]
const only = process.argv.slice(2)
const args = [
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
  '--test-timeout=120000',
  // A handle a failed test leaves open (a server, a child process) must fail that test,
  // not keep its file, and so the whole run, from ever ending.
  '--test-force-exit',
  // TEST_REPORT=<file>: a JUnit report beside the spec output, with each test's duration
  // (which files make the run long).
  ...(process.env.TEST_REPORT
    ? ['--test-reporter=junit', `--test-reporter-destination=${process.env.TEST_REPORT}`]
    : []),
  ...(only.length > 0 ? only : files),
]

const env = { ...process.env }
// Each test file is its own process that loads the same modules: node's compile cache
// spares every process after the first the work of compiling them again (about half a
// second each).
env.NODE_COMPILE_CACHE ??= join('node_modules', '.cache', 'node-compile-cache')
// Service processes a test starts (its own app in-process, or a spawned `npm start`) share
// the test database with every other file on PostgreSQL; a webhook worker among them would
// deliver other tests' events. A test that wants delivery starts a worker itself.
env.WEBHOOK_WORKER ??= 'false'
const scratch = mkdtempSync(join(tmpdir(), 'tenant-auth-test-'))
// TEST_PGBOUNCER=1 (with a postgres:// DATABASE_URL): every test's database traffic goes
// through a real PgBouncer in transaction mode (deploy/pgbouncer.ini) in front of that
// server, and the service runs with DATABASE_POOL_MODE=transaction (CONTRACT §15).
const bouncer = env.TEST_PGBOUNCER === '1' ? await startPgBouncer(env) : undefined
try {
  if (!env.DATABASE_URL) {
    // On the embedded database, migrate once and let every test server copy the result.
    env[TEMPLATE_ENV] = join(scratch, 'pglite-template.tar')
    await writeTemplate(env[TEMPLATE_ENV])
  }
  const result = spawnSync(process.execPath, args, { stdio: 'inherit', env })
  process.exitCode = result.status ?? 1
} finally {
  await bouncer?.stop()
  rmSync(scratch, { recursive: true, force: true })
}

async function startPgBouncer(env: NodeJS.ProcessEnv) {
  const { PgBouncer } = await import('../test/topology/stack.ts')
  if (!env.DATABASE_URL?.startsWith('postgres')) {
    throw new Error('TEST_PGBOUNCER=1 needs a postgres:// DATABASE_URL to stand in front of')
  }
  const target = new URL(env.DATABASE_URL)
  const started = await PgBouncer.start({
    pgHost: target.hostname,
    pgPort: Number(target.port || 5432),
    user: decodeURIComponent(target.username || 'postgres'),
  })
  env.DATABASE_URL = started.url(target.pathname.slice(1))
  env.DATABASE_POOL_MODE = 'transaction'
  console.log(`tests through PgBouncer (transaction mode) on port ${started.port}`)
  return started
}
