// npm run test:topology: several machines on real engines (CONTRACT §15, test/topology).
// It starts its own PostgreSQL cluster, PgBouncer, Redis master and replica, two Sentinels,
// three service instances and HAProxy, on free ports of 127.0.0.1, from the files in
// deploy/; the machine's own PostgreSQL and Redis are never touched. TOPOLOGY=short (the
// default, CI) runs a short load; TOPOLOGY=long a longer and wider one.
import { spawnSync } from 'node:child_process'
import { globSync } from 'node:fs'
import { join } from 'node:path'

const only = process.argv.slice(2)
const files = only.length > 0 ? only : globSync('test/topology/*.test.ts').sort()
const args = [
  '--test',
  '--test-reporter=spec',
  '--test-force-exit',
  '--test-concurrency=1',
  `--test-timeout=${process.env.TOPOLOGY === 'long' ? 600_000 : 180_000}`,
  ...files,
]
const env = { ...process.env }
env.TOPOLOGY_SUITE = '1' // the files skip themselves under plain `npm test`
env.NODE_COMPILE_CACHE ??= join('node_modules', '.cache', 'node-compile-cache')
const started = performance.now()
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env })
console.log(`topology: total ${Math.round((performance.now() - started) / 1000)} s`)
process.exitCode = result.status ?? 1
