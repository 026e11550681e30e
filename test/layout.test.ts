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

/** The module whose own queries.ts `target` is (`src/modules/<b>/queries.ts`), or undefined. */
function queriesOwner(target: string): string | undefined {
  return /^src[/\\]modules[/\\]([^/\\]+)[/\\]queries\.ts$/.exec(target)?.[1]
}

/** The module `file` lives in (`src/modules/<a>/…`), or undefined for the rest of src/. */
function moduleOf(file: string): string | undefined {
  return /^src[/\\]modules[/\\]([^/\\]+)[/\\]/.exec(file)?.[1]
}

/** `file imports target` for each import of another module's queries.ts that `file` makes. */
function foreignQueries(file: string, text: string): string[] {
  return specifiers(text)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(root, join(root, dirname(file), spec)))
    .filter((target) => {
      const owner = queriesOwner(target)
      return owner !== undefined && owner !== moduleOf(file)
    })
    .map((target) => `${file} imports ${target}`)
}

test('the cross-module queries check sees an import of another module and passes its own', () => {
  const file = join('src', 'modules', 'signin', 'password.ts')
  const text = [
    "import { findUserById } from '../users/queries.ts'",
    "import { findUserByEmail } from '../users/reads.ts'",
    "import type { Tenant } from '../tenants/queries.ts'",
    "import { store } from './queries.ts'",
  ].join('\n')
  assert.deepEqual(foreignQueries(file, text), [
    `${file} imports ${join('src', 'modules', 'users', 'queries.ts')}`,
    `${file} imports ${join('src', 'modules', 'tenants', 'queries.ts')}`,
  ])
  const plugin = join('src', 'plugins', 'auth.ts')
  assert.equal(foreignQueries(plugin, "import { x } from '../modules/users/queries.ts'").length, 1)
  // The real tree: modules do import their own queries.ts, and none of those is flagged.
  const own = join('src', 'modules', 'users', 'service.ts')
  assert.ok(importsOf(own).includes(join('src', 'modules', 'users', 'queries.ts')))
  assert.deepEqual(foreignQueries(own, readFileSync(join(root, own), 'utf8')), [])
})

test("no file in src/ outside a module imports that module's queries.ts: it asks the module's read or service file (issue 36)", () => {
  // Modules, their tests, src/web/, src/plugins/, src/routes.ts and src/db/ alike: a module
  // reads or changes another's data through the file that module exports for it
  // (users/reads.ts, tenants/tenant.ts, roles/members.ts, …; docs/ARCHITECTURE.md).
  const offenders = files.flatMap((file) =>
    foreignQueries(file, readFileSync(join(root, file), 'utf8')),
  )
  assert.deepEqual(offenders, [])
})
