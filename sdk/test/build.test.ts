// The package builds with tsc (sdk/tsconfig.build.json, as `npm run build` in sdk/), and
// what it emits imports nothing but jose and its own files: the adapters reach no
// framework at run time, and the browser gets no dependency it does not need.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'

const SDK = join(import.meta.dirname, '..')
const TSC = join(SDK, '..', 'node_modules', 'typescript', 'bin', 'tsc')

test('the SDK builds, and its output imports only jose and itself', async () => {
  // Into sdk/dist, as `npm run build` does: there `jose` resolves as it will for users.
  const out = join(SDK, 'dist')
  const build = spawnSync(
    process.execPath,
    [TSC, '-p', join(SDK, 'tsconfig.build.json'), '--outDir', out],
    { encoding: 'utf8' },
  )
  assert.equal(build.status, 0, build.stdout + build.stderr)
  assert.ok(existsSync(join(out, 'index.js')))
  assert.ok(existsSync(join(out, 'index.d.ts')))
  const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.js'),
  )
  for (const file of files) {
    const source = readFileSync(join(out, file), 'utf8')
    // `from`/`import` as words of code, not the end of a string such as '/users/import'.
    const imports = /(?<![\w/.$-])(?:from|import)\s*\(?\s*'([^']+)'/g
    for (const [, specifier] of source.matchAll(imports)) {
      assert.ok(
        specifier === 'jose' || /^\.\.?\/.*\.js$/.test(specifier),
        `${file} imports ${specifier}`,
      )
    }
  }
  const sdk = await import(join(out, 'index.js'))
  for (const name of [
    'createClient',
    'createSessionClient',
    'createAdminClient',
    'verifyAccessToken',
  ]) {
    assert.equal(typeof sdk[name], 'function', name)
  }
})
