// Loaded by `npm start` before the service (`node --import ./src/strip-cache.js
// src/server.ts`): keeps the service's TypeScript, stripped of its types, in a cache on disk,
// so that a start after the first runs no type stripping at all (issue 10).
//
// Why: Node strips types with amaro, a WebAssembly build of swc that it loads on the first
// .ts file and keeps for the life of the process: 17 MB of resident memory and part of
// every start, spent on files that have not changed since the last start. Node's compile
// cache (enabled in server.ts) keeps the compiled code but not the stripped source, so it
// does not spare that.
//
// How: a load hook (module.registerHooks, synchronous, in this thread) answers every
// `file:` URL ending in .ts with its stripped source from the cache when one is there,
// keyed by the SHA-256 of the Node version and the file's own bytes, so an edited file or
// another Node is a miss. A miss strips with Node's own stripTypeScriptTypes in 'strip'
// mode, which is what Node runs for a .ts file (types replaced by blanks: lines and
// columns, so stack traces, are unchanged), and writes the result for the next start.
// Every other URL goes to Node's own loader. Plain JavaScript, because a .ts file here
// would need the very stripper it avoids.
//
// The cache lives in node_modules/.cache/tenant-auth-stripped (beside Node's compile cache
// of the tests), or in STRIP_CACHE_DIR. Never in a shared temporary directory: what the
// cache holds is run as the service's code, so its folder must be as private as the
// code's own: a folder is used only when root or this user owns it and no group and no
// other user may write it. One the service cannot write is still read: the container image
// fills it at build time for every file the service runs (fillCache) and runs as a user who
// can change none of it. Where no folder can be used so, every start strips (and nothing is
// cached). STRIP_CACHE=0 turns the hook off.
import { createHash } from 'node:crypto'
import {
  accessSync,
  constants,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { registerHooks, stripTypeScriptTypes } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const directory = cacheDirectory()

if (process.env.STRIP_CACHE !== '0' && directory) {
  registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context)
      const path = fileURLToPath(url)
      const source = readFileSync(path, 'utf8')
      return { format: 'module', source: stripped(path, source), shortCircuit: true }
    },
  })
}

/** Strips these files into the cache now (the image's build, for every file of src/). */
export function fillCache(paths) {
  if (!directory) throw new Error('strip-cache: no cache folder can be written')
  for (const path of paths) stripped(path, readFileSync(path, 'utf8'))
}

/** The file's source without its types: from the cache, or stripped now and cached. */
function stripped(path, source) {
  const key = createHash('sha256')
    .update(process.version)
    .update('\0')
    .update(path)
    .update('\0')
    .update(source)
    .digest('hex')
  const file = join(directory, `${key}.js`)
  try {
    return readFileSync(file, 'utf8')
  } catch {
    // A miss: strip it below.
  }
  const code = quietly(() => stripTypeScriptTypes(source, { mode: 'strip' }))
  try {
    // Written aside and renamed, so a start that runs beside this one never reads half a file.
    const partial = `${file}.${process.pid}.tmp`
    writeFileSync(partial, code)
    renameSync(partial, file)
  } catch {
    // A cache that cannot be written costs the next start the stripping, nothing more.
  }
  return code
}

/** stripTypeScriptTypes warns that it is experimental; Node's own stripping does not. */
function quietly(strip) {
  const emit = process.emitWarning
  process.emitWarning = (warning, ...rest) => {
    const text = typeof warning === 'string' ? warning : warning?.message
    if (!String(text).includes('stripTypeScriptTypes')) emit.call(process, warning, ...rest)
  }
  try {
    return strip()
  } finally {
    process.emitWarning = emit
  }
}

function cacheDirectory() {
  const here = fileURLToPath(new URL('..', import.meta.url))
  let readOnly
  for (const candidate of [
    process.env.STRIP_CACHE_DIR,
    join(here, 'node_modules', '.cache', 'tenant-auth-stripped'),
  ]) {
    if (!candidate) continue
    try {
      mkdirSync(candidate, { recursive: true })
    } catch {
      // Cannot be made: it may exist read-only, or not at all.
    }
    if (!privateFolder(candidate)) continue
    try {
      accessSync(candidate, constants.W_OK)
      return candidate
    } catch {
      readOnly ??= candidate
    }
  }
  return readOnly
}

/** Owned by root or this user, writable by no group and no other user. */
function privateFolder(path) {
  try {
    const stat = statSync(path)
    const owner = stat.uid === 0 || stat.uid === process.getuid?.()
    return stat.isDirectory() && owner && (stat.mode & 0o022) === 0
  } catch {
    return false
  }
}
