// The bench's regression guard (issue 37): `npm run bench -- --compare <saved>.json` and
// `node bench/compare.ts <saved> <new>` judge each path by CPU per request against a saved run.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { compareRuns, cpuPerRequest, MAX_REGRESSION } from '../bench/compare.ts'

const run = (paths: Record<string, [number, number]>) => ({
  paths: Object.entries(paths).map(([name, [cpuMs, pgCpuMs]]) => ({
    name,
    serviceMedian: { rps: 1000, cpuMs, pgCpuMs },
  })),
})

test('CPU per request is the server and PostgreSQL together, by path', () => {
  const figures = cpuPerRequest(run({ 'GET /me': [0.3, 0.1], 'POST auth/refresh': [1, 0.5] }))
  assert.deepEqual(
    [...figures],
    [
      ['GET /me', 0.4],
      ['POST auth/refresh', 1.5],
    ],
  )
  assert.throws(() => cpuPerRequest({}), /no paths/)
})

test('a path dearer by more than 10 % regresses; within 10 % or cheaper does not', () => {
  const saved = run({ a: [1, 0], b: [1, 0], c: [1, 0], gone: [1, 0] })
  const current = run({ a: [1.05, 0.06], b: [0.7, 0], c: [1 + MAX_REGRESSION, 0], added: [9, 0] })
  const changes = compareRuns(saved, current)
  // Paths in only one of the runs are not compared.
  assert.deepEqual(
    changes.map((c) => [c.name, c.regressed]),
    [
      ['a', true],
      ['b', false],
      ['c', false],
    ],
  )
  assert.ok(Math.abs(changes[0].change - 0.11) < 1e-9)
})

const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function compareFiles(saved: unknown, current: unknown) {
  writeFileSync(join(dir, 'saved.json'), JSON.stringify(saved))
  writeFileSync(join(dir, 'new.json'), JSON.stringify(current))
  return spawnSync(
    process.execPath,
    ['bench/compare.ts', join(dir, 'saved.json'), join(dir, 'new.json')],
    { cwd: join(import.meta.dirname, '..'), encoding: 'utf8' },
  )
}

test('the command exits 1 on a regression and names the path, 0 without one', () => {
  const saved = run({ 'GET /me': [0.4, 0.1], 'POST auth/login': [30, 1] })
  const worse = compareFiles(saved, run({ 'GET /me': [0.5, 0.1], 'POST auth/login': [30, 1] }))
  assert.equal(worse.status, 1, worse.stderr)
  assert.match(worse.stdout, /GET \/me .*\+20\.0 %\s+REGRESSED/)
  assert.doesNotMatch(worse.stdout, /auth\/login.*REGRESSED/)
  const same = compareFiles(saved, run({ 'GET /me': [0.42, 0.1], 'POST auth/login': [29, 1] }))
  assert.equal(same.status, 0, same.stdout + same.stderr)
  // Nothing in common is no verdict: the guard fails rather than pass vacuously.
  assert.equal(compareFiles(saved, run({ other: [1, 0] })).status, 1)
})
