// Builds the admin console (console/ → console/dist) for the service to serve at
// /console/. Run by `npm run build`, and by npm itself after `npm ci` / `npm install`
// (the `prepare` script, with --if-needed: only when the build is missing or older than
// its sources), so `npm start` serves the console on a fresh clone. Without Vite (an
// install without devDependencies) it says so and leaves the service to answer 503 at
// /console/.
import { spawnSync } from 'node:child_process'
import { existsSync, globSync, statSync } from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const consoleDir = join(root, 'console')
const built = join(consoleDir, 'dist', 'index.html')

function newestSource(): number {
  const files = globSync(
    ['console/src/**/*', 'console/index.html', 'console/vite.config.ts', 'sdk/src/**/*.ts'],
    { cwd: root },
  )
  return Math.max(...files.map((f) => statSync(join(root, f)).mtimeMs))
}

if (
  process.argv.includes('--if-needed') &&
  existsSync(built) &&
  statSync(built).mtimeMs >= newestSource()
) {
  console.log('console: up to date')
  process.exit(0)
}

const vite = [
  join(consoleDir, 'node_modules', 'vite', 'bin', 'vite.js'),
  join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
].find(existsSync)
if (!vite) {
  console.log(
    'console: not built (Vite is not installed; install with devDependencies, then npm run build)',
  )
  process.exit(0)
}
const run = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
  cwd: consoleDir,
  stdio: 'inherit',
})
process.exit(run.status ?? 1)
