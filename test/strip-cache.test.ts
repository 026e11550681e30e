// The stripped-source cache of `npm start` (src/strip-cache.js, issue 10): a start after the
// first runs the service's TypeScript without loading Node's type stripper; an edited file
// is stripped again; lines and columns stay where they were, so stack traces point at the
// TypeScript source.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { tempDir } from './helpers.ts'

const HOOK = new URL('../src/strip-cache.js', import.meta.url).pathname

/** Runs `main.ts` of `dir` as npm start runs the service; answers what it printed. */
function start(dir: string, cache: string, env: Record<string, string> = {}) {
  const res = spawnSync(process.execPath, ['--import', HOOK, join(dir, 'main.ts')], {
    env: { PATH: process.env.PATH ?? '', STRIP_CACHE_DIR: cache, ...env },
    encoding: 'utf8',
  })
  assert.equal(res.status, 0, res.stderr)
  return JSON.parse(res.stdout) as { value: number; stripper: boolean; line: number; col: number }
}

function project(dir: string, factor: number) {
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}')
  writeFileSync(
    join(dir, 'twice.ts'),
    `export function twice(n: number): number {\n  return n * ${factor}\n}\n`,
  )
  writeFileSync(
    join(dir, 'main.ts'),
    [
      "import { twice } from './twice.ts'",
      'interface Shape { side: number }',
      'const shape: Shape = { side: 21 }',
      'const where: string = new Error().stack?.split("\\n")[1] ?? ""',
      'const [, line, col] = /:(\\d+):(\\d+)\\)?$/.exec(where) ?? []',
      'const stripper = process.moduleLoadList.some((m: string) => m.includes("amaro"))',
      'console.log(JSON.stringify({ value: twice(shape.side), stripper, line: Number(line), col: Number(col) }))',
      '',
    ].join('\n'),
  )
}

test('a start after the first loads no type stripper, and runs the same code', () => {
  const dir = tempDir()
  const cache = tempDir()
  project(dir, 2)
  const first = start(dir, cache)
  assert.equal(first.value, 42)
  assert.equal(first.stripper, true, 'the first start strips the files')
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.js')).length, 2)
  const second = start(dir, cache)
  assert.deepEqual(second, { ...first, stripper: false })
})

test('types become blanks: the line and column of a stack frame are the source’s', () => {
  const dir = tempDir()
  project(dir, 2)
  const { line, col } = start(dir, tempDir())
  // `new Error()` is on line 4 of main.ts, after `const where: string = `.
  assert.equal(line, 4)
  assert.equal(col, 'const where: string = '.length + 1)
})

test('an edited file is stripped again; an unchanged one still comes from the cache', () => {
  const dir = tempDir()
  const cache = tempDir()
  project(dir, 2)
  start(dir, cache)
  project(dir, 3)
  const edited = start(dir, cache)
  assert.equal(edited.value, 63)
  assert.equal(edited.stripper, true)
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.js')).length, 3)
})

test('STRIP_CACHE=0 leaves the stripping to Node and writes nothing', () => {
  const dir = tempDir()
  const cache = tempDir()
  project(dir, 2)
  start(dir, cache)
  project(dir, 3)
  const off = start(dir, cache, { STRIP_CACHE: '0' })
  assert.equal(off.stripper, true)
  assert.equal(off.value, 63)
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.js')).length, 2, 'nothing written')
})
