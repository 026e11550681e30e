// npm run test:faults: the fault-injection suite (test/faults), one file at a time, each
// breaking its own private PostgreSQL, Redis and service processes (see test/faults/procs.ts).
// Short by default (CI); FAULTS_LONG=1 runs heavier and longer loads.
import { spawnSync } from 'node:child_process'
import { globSync } from 'node:fs'
import { join } from 'node:path'

const only = process.argv.slice(2)
const files = only.length > 0 ? only : globSync('test/faults/*.test.ts').sort()
const args = [
  '--test',
  '--test-reporter=spec',
  '--test-force-exit',
  // One scenario at a time: each loads the machine and measures latencies and recovery.
  '--test-concurrency=1',
  `--test-timeout=${process.env.FAULTS_LONG === '1' ? 600_000 : 150_000}`,
  ...files,
]
const env = { ...process.env }
env.FAULT_SUITE = '1' // the files skip themselves under plain `npm test`
env.NODE_COMPILE_CACHE ??= join('node_modules', '.cache', 'node-compile-cache')
const started = performance.now()
const result = spawnSync(process.execPath, args, { stdio: 'inherit', env })
console.log(`faults: total ${Math.round((performance.now() - started) / 1000)} s`)
process.exitCode = result.status ?? 1
