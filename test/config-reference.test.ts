// The configuration reference (CONTRACT §23): docs/configuration.md is what the schema
// renders, and no code of the service reads a variable the schema does not declare, so the
// page documents every variable the service reads. Only the start reads the environment:
// main.ts hands it to config.ts; server.ts and strip-cache.js run before any configuration.
import assert from 'node:assert/strict'
import { globSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { REFERENCE, renderReference } from '../scripts/config-docs.ts'
import { ENV_SCHEMA } from '../src/config/schema.ts'
import type { Variable } from '../src/config/variables.ts'

const ROOT = join(import.meta.dirname, '..')
const DECLARED = new Set(Object.keys(ENV_SCHEMA.properties))
/** The files that may touch process.env, and the reader that looks names up by the schema. */
const READS_THE_ENVIRONMENT = [
  'src/main.ts',
  'src/server.ts',
  'src/strip-cache.js',
  'src/config.ts',
]
const READS_BY_SCHEMA = ['src/config.ts', 'src/config/variables.ts']

interface Read {
  name: string | undefined
  line: number
}

/**
 * The environment reads in a source text: `process.env.X`, `process.env['X']`, and the same
 * on anything named `env` (a parameter handed the environment); `name` is undefined where
 * the name is computed (`env[name]`) or the whole environment is taken (`{ ...process.env }`).
 */
export function environmentReads(text: string): { env: Read[]; processEnv: Read[] } {
  // Comments blanked (keeping their line breaks); a `//` after a colon is a URL's.
  const source = text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:])\/\/.*$/gm, '$1')
  const reads = (pattern: RegExp) =>
    [...source.matchAll(pattern)].map((m) => ({
      name: m[1] ?? m[2],
      line: source.slice(0, m.index).split('\n').length,
    }))
  const named = String.raw`\.([A-Z][A-Z0-9_]*)\b|\[\s*['"\x60]([A-Za-z0-9_]+)['"\x60]\s*\]`
  return {
    env: reads(new RegExp(String.raw`(?<![\w.])env(?:${named}|\[)`, 'g')),
    processEnv: reads(new RegExp(String.raw`process\.env(?:${named}|(?![\w]))`, 'g')),
  }
}

function sourceFiles(): string[] {
  return globSync(['src/**/*.ts', 'src/**/*.js'], { cwd: ROOT })
    .filter((f) => !f.endsWith('.test.ts'))
    .sort()
}

test('docs/configuration.md is what the schema renders (npm run docs:config writes it)', () => {
  assert.equal(
    readFileSync(REFERENCE, 'utf8'),
    renderReference(),
    'docs/configuration.md is stale: run npm run docs:config',
  )
})

test('every variable of the schema is documented: a description, a type, a group', () => {
  for (const [name, variable] of Object.entries(ENV_SCHEMA.properties) as [string, Variable][]) {
    assert.match(name, /^[A-Z][A-Z0-9_]*$/, name)
    assert.ok(variable.description.length > 10, `${name}: a description`)
    assert.ok(variable.kind, `${name}: a type`)
    assert.ok(variable.group, `${name}: a group`)
    assert.ok(renderReference().includes(`| \`${name}\` |`), `${name} on the page`)
  }
})

test('the scan finds every way of reading a variable', () => {
  const { env, processEnv } = environmentReads(
    [
      'const a = process.env.FIRST_ONE',
      "const b = process.env['SECOND']",
      'process.env.THIRD ??= "x"',
      'const all = { ...process.env }',
      'const c = env.FOURTH',
      'const d = env[name]',
      'const e = this.env.NOT_ONE',
      'const f = someenv.NOT_TWO',
      'function g(env: { X?: string }, flow: { env: { codes: string } }) { return flow.env.codes }',
      '// process.env.IN_A_COMMENT /* env.NOR_HERE */',
      '/* process.env.NOR_THERE',
      '   env.NOR_THERE */ fetch("http://x") // env.AFTER_A_URL',
    ].join('\n'),
  )
  assert.deepEqual(
    processEnv.map((r) => r.name),
    ['FIRST_ONE', 'SECOND', 'THIRD', undefined],
  )
  assert.deepEqual(
    env.map((r) => r.name),
    ['FOURTH', undefined],
  )
})

test('the service reads no environment variable the schema does not declare', () => {
  const undeclared: string[] = []
  for (const file of sourceFiles()) {
    const { env, processEnv } = environmentReads(readFileSync(join(ROOT, file), 'utf8'))
    for (const read of [...env, ...processEnv]) {
      if (read.name !== undefined && !DECLARED.has(read.name)) {
        undeclared.push(`${file}:${read.line} ${read.name}`)
      }
    }
  }
  assert.deepEqual(undeclared, [], 'declare each in src/config/schema.ts')
})

test('only the start reads the environment; only the schema’s reader looks names up by it', () => {
  const outside: string[] = []
  for (const file of sourceFiles()) {
    const { env, processEnv } = environmentReads(readFileSync(join(ROOT, file), 'utf8'))
    if (!READS_THE_ENVIRONMENT.includes(file)) {
      outside.push(...processEnv.map((r) => `${file}:${r.line} process.env`))
    }
    // main.ts hands the whole environment to config.ts, whose reader looks names up.
    if (!READS_BY_SCHEMA.includes(file) && file !== 'src/main.ts') {
      const computed = [...env, ...processEnv].filter((r) => r.name === undefined)
      outside.push(...computed.map((r) => `${file}:${r.line} a computed or whole read`))
    }
  }
  assert.deepEqual(outside, [])
})
