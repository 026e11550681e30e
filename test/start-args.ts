// How `npm start` runs the service, read from package.json's start script, so the tests and
// benchmarks that start the service as a process start it exactly so: Node's flags, the
// stripped-source cache (src/strip-cache.js) and src/server.ts, with paths made absolute.
import { readFileSync } from 'node:fs'
import { isAbsolute, join } from 'node:path'

const ROOT = new URL('..', import.meta.url).pathname

function startArgs(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const [node, ...args] = String(pkg.scripts.start).split(/\s+/)
  if (node !== 'node') throw new Error(`the start script does not run node: ${pkg.scripts.start}`)
  return args.map((arg) =>
    arg.startsWith('-') || isAbsolute(arg) || !/\.(ts|js)$/.test(arg) ? arg : join(ROOT, arg),
  )
}

/** The arguments after `node` of `npm start`. */
export const START_ARGS: readonly string[] = startArgs()
