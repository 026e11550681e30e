// npm test: every test file, with node's test runner. DATABASE_URL and REDIS_URL choose
// the databases (unset: a fresh embedded PGlite per test server, in-memory rate limits).
import { spawnSync } from 'node:child_process'
import { globSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEMPLATE_ENV, writeTemplate } from '../test/pglite-template.ts'

// The fault suite starts and kills its own PostgreSQL and Redis (`npm run test:faults`), the
// topology suite its own deployment at scale (`npm run test:topology`).
const files = [
  ...globSync('src/**/*.test.ts'),
  ...globSync('test/**/*.test.ts', { exclude: ['test/faults/**', 'test/topology/**'] }),
  ...globSync('sdk/test/**/*.test.ts'),
].sort()
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
