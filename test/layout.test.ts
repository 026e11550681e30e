// The service does not depend on its tests (STYLE, Layout): no file in src/ but a test
// imports from test/, and the fixtures tests share live in test/fixtures/, not beside
// the code.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, sep } from 'node:path'
import { test } from 'node:test'

const root = join(import.meta.dirname, '..')
const src = join(root, 'src')

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(path)
    else if (/\.[cm]?[jt]s$/.test(entry.name)) yield path
  }
}

const files = [...walk(src)].map((path) => relative(root, path))
const isTest = (file: string) => file.endsWith('.test.ts')

/** The module specifiers a file names: static and dynamic imports, and re-exports. */
function specifiers(text: string): string[] {
  const found: string[] = []
  for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) found.push(m[1])
  return found
}

test('the walk sees the service (the checks below are not vacuous)', () => {
  assert.ok(files.includes(join('src', 'app.ts')), 'src/app.ts found')
  assert.ok(files.some(isTest), 'some test beside the code found')
})

test('no file in src/ but a test imports from test/', () => {
  const offenders = files
    .filter((file) => !isTest(file))
    .flatMap((file) =>
      specifiers(readFileSync(join(root, file), 'utf8'))
        .filter((spec) => spec.includes('/test/'))
        .map((spec) => `${file} imports ${spec}`),
    )
  assert.deepEqual(offenders, [])
})

test('no fixtures or test support in src/: they live in test/fixtures/', () => {
  const offenders = files.filter((file) => /fixtures|test-support/.test(basename(file)))
  assert.deepEqual(offenders, [])
})

/** The files under src/ a file imports (relative specifiers resolved), as paths from the root. */
function importsOf(file: string): string[] {
  return specifiers(readFileSync(join(root, file), 'utf8'))
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(root, join(root, dirname(file), spec)))
}

test('no file under src/modules/ imports from src/web/: the pages are handed in (issue 36)', () => {
  const offenders = files
    .filter((file) => file.startsWith(join('src', 'modules')) && !isTest(file))
    .flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith(join('src', 'web') + sep))
        .map((target) => `${file} imports ${target}`),
    )
  assert.deepEqual(offenders, [])
})

test("no file under src/web/ imports a module's queries.ts: it asks the module's service (issue 36)", () => {
  const offenders = files
    .filter((file) => file.startsWith(join('src', 'web') + sep) && !isTest(file))
    .flatMap((file) =>
      importsOf(file)
        .filter((target) => /^src[/\\]modules[/\\][^/\\]+[/\\]queries\.ts$/.test(target))
        .map((target) => `${file} imports ${target}`),
    )
  assert.deepEqual(offenders, [])
})
