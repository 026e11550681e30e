// docs/ARCHITECTURE.md names files and folders; each must exist (issue 35: claims in it went
// out of date as the tree moved). A path with a folder in it is read from the repository's
// root or from one of the bases the document writes paths against (src/, src/modules/, …);
// a bare file name must be a file somewhere in the tree.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

const root = join(import.meta.dirname, '..')
const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8')
const BASES = [
  '',
  'src',
  'src/db',
  'src/modules',
  'src/web',
  'src/lib',
  'test',
  'sdk',
  'console',
  'console/src',
  'deploy',
  'scripts',
  'examples',
]
/** What a run writes (not in the repository), which the document may name. */
const WRITTEN = ['test-results/', 'bench/results/', 'data/']
const SKIP = new Set(['node_modules', '.git', '.next', 'dist', 'data', 'test-results'])

function* names(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue
    if (entry.isDirectory()) yield* names(join(dir, entry.name))
    else yield entry.name
  }
}
const everyName = new Set(names(root))

/** Backticked tokens that look like a file (a known extension) or a folder (a trailing /). */
function pathsNamed(text: string): string[] {
  const found = new Set<string>()
  for (const [, token] of text.matchAll(/`([A-Za-z0-9_.\-/[\]]+)`/g)) {
    if (/^[/.]/.test(token) || token.includes('..') || token.includes('{')) continue
    if (WRITTEN.some((written) => token.startsWith(written))) continue
    if (
      /\.(ts|js|md|json|yaml|yml|ini|conf|sql|css|html|tsx)$/.test(token) ||
      token.endsWith('/')
    ) {
      found.add(token)
    }
  }
  return [...found]
}

test('every file and folder docs/ARCHITECTURE.md names exists', () => {
  const named = pathsNamed(doc)
  assert.ok(named.length > 100, `the document names ${named.length} paths: the pattern is wrong`)
  const missing = named.filter((path) => {
    if (!path.replace(/\/$/, '').includes('/') && !path.endsWith('/')) return !everyName.has(path)
    return !BASES.some((base) => existsSync(join(root, base, path)))
  })
  assert.deepEqual(missing, [])
})
