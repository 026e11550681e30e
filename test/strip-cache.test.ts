// The stripped-source cache of `npm start` (src/strip-cache.js, issue 10): a start after the
// first runs the service's TypeScript without loading Node's type stripper; an edited file
// is stripped again; lines and columns stay where they were, so stack traces point at the
// TypeScript source.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { chmodSync, chownSync, readdirSync, writeFileSync } from 'node:fs'
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

// The container image (Containerfile) fills the cache as root at build time and runs the
// service as a user who cannot write it: the cache is read, and only from a folder nobody
// else can change (what it holds runs as the service's code).
const canSwitchUser = process.getuid?.() === 0
const NOBODY = 65534

function fill(dir: string, cache: string) {
  const fill = `const { fillCache } = await import(${JSON.stringify(HOOK)}); fillCache(${JSON.stringify(
    [join(dir, 'main.ts'), join(dir, 'twice.ts')],
  )})`
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', fill], {
    env: { PATH: process.env.PATH ?? '', STRIP_CACHE_DIR: cache },
    encoding: 'utf8',
  })
  assert.equal(res.status, 0, res.stderr)
}

function startAs(uid: number, dir: string, cache: string) {
  const res = spawnSync(process.execPath, ['--import', HOOK, join(dir, 'main.ts')], {
    env: { PATH: process.env.PATH ?? '', STRIP_CACHE_DIR: cache },
    encoding: 'utf8',
    uid,
    gid: uid,
  })
  assert.equal(res.status, 0, res.stderr)
  return JSON.parse(res.stdout) as { value: number; stripper: boolean }
}

test('a cache the service cannot write is read when only root or its own user can change it', {
  skip: canSwitchUser ? false : 'needs root, to start the service as another user',
}, () => {
  const dir = tempDir()
  const cache = tempDir()
  chmodSync(dir, 0o755)
  project(dir, 2)
  fill(dir, cache)
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.js')).length, 2)
  chmodSync(cache, 0o755)
  assert.deepEqual(startAs(NOBODY, dir, cache), {
    value: 42,
    stripper: false,
    line: 4,
    col: 23,
  })
  assert.equal(readdirSync(cache).filter((f) => f.endsWith('.js')).length, 2, 'nothing written')
})

test('a read-only cache that a group or anyone may write is never read', {
  skip: canSwitchUser ? false : 'needs root, to start the service as another user',
}, () => {
  const dir = tempDir()
  chmodSync(dir, 0o755)
  project(dir, 2)
  for (const [mode, owner] of [
    [0o775, 0],
    [0o757, 0],
    [0o755, 4242],
  ] as const) {
    const cache = tempDir()
    fill(dir, cache)
    // What a start would run, changed by someone else: it must not be run.
    for (const file of readdirSync(cache)) {
      writeFileSync(join(cache, file), 'console.log(JSON.stringify({ value: 666 }))')
    }
    chmodSync(cache, mode)
    chownSync(cache, owner, owner)
    const started = startAs(NOBODY, dir, cache)
    assert.equal(started.value, 42, `mode ${mode.toString(8)}, owner ${owner}`)
    assert.equal(started.stripper, true)
  }
})
