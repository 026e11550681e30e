// npm test: every test file, with node's test runner. DATABASE_URL and REDIS_URL choose
// the databases (unset: a fresh embedded PGlite per file, in-memory rate limits).
import { spawnSync } from 'node:child_process'
import { globSync } from 'node:fs'

const files = [...globSync('src/**/*.test.ts'), ...globSync('test/**/*.test.ts')].sort()
const only = process.argv.slice(2)
const args = [
  '--test',
  '--test-reporter=spec',
  `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 3}`,
  '--test-timeout=120000',
  ...(only.length > 0 ? only : files),
]
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env: process.env })
process.exit(result.status ?? 1)
