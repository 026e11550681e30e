// The bench's regression guard (issue 37): each path's CPU per request (the server's and
// PostgreSQL's, the figure the rest of the machine disturbs least) in one run against a saved
// one. `npm run bench -- --compare bench/results/<file>.json` runs the bench and then this;
// `node bench/compare.ts <saved>.json <new>.json` compares two saved runs without running.
// Past MAX_REGRESSION on any path shared by both runs the exit code is 1.
import { readFileSync } from 'node:fs'

/** A path may cost this much more CPU per request than in the saved run (10 %). */
export const MAX_REGRESSION = 0.1

interface SavedPath {
  name: string
  serviceMedian?: { cpuMs: number; pgCpuMs: number }
}

export interface PathChange {
  name: string
  savedMs: number
  currentMs: number
  /** currentMs / savedMs - 1: positive is dearer. */
  change: number
  regressed: boolean
}

/** CPU milliseconds per request of each path a run's report holds, by name. */
export function cpuPerRequest(report: unknown): Map<string, number> {
  const paths = (report as { paths?: SavedPath[] } | null)?.paths
  if (!Array.isArray(paths)) throw new Error('not a bench report: it has no paths')
  const out = new Map<string, number>()
  for (const p of paths) {
    const m = p.serviceMedian
    if (typeof p.name !== 'string' || !m) continue
    const total = m.cpuMs + m.pgCpuMs
    if (Number.isFinite(total) && total > 0) out.set(p.name, total)
  }
  return out
}

/** The change of every path present in both runs, in the saved run's order. */
export function compareRuns(saved: unknown, current: unknown, max = MAX_REGRESSION): PathChange[] {
  const before = cpuPerRequest(saved)
  const after = cpuPerRequest(current)
  const changes: PathChange[] = []
  for (const [name, savedMs] of before) {
    const currentMs = after.get(name)
    if (currentMs === undefined) continue
    const change = currentMs / savedMs - 1
    // Exactly the bound is within it (1.1 / 1 - 1 is a hair above 0.1 in floating point).
    changes.push({ name, savedMs, currentMs, change, regressed: change > max + 1e-9 })
  }
  return changes
}

/** The lines the guard prints, and whether any path regressed. */
export function formatChanges(changes: PathChange[], savedFile: string): string[] {
  if (changes.length === 0) return [`compare: no path in common with ${savedFile}`]
  const lines = [
    `\ncompare: CPU ms per request (server + PostgreSQL) against ${savedFile}; a regression is over ${MAX_REGRESSION * 100} %`,
  ]
  for (const c of changes) {
    const sign = c.change >= 0 ? '+' : ''
    lines.push(
      `  ${c.name.padEnd(26)} ${c.savedMs.toFixed(2).padStart(7)} → ${c.currentMs.toFixed(2).padStart(7)}  ${`${sign}${(c.change * 100).toFixed(1)} %`.padStart(9)}${c.regressed ? '  REGRESSED' : ''}`,
    )
  }
  return lines
}

/** Prints the comparison of a run's report against a saved file; true when nothing regressed. */
export function guard(savedFile: string, current: unknown): boolean {
  const saved = JSON.parse(readFileSync(savedFile, 'utf8'))
  const changes = compareRuns(saved, current)
  for (const line of formatChanges(changes, savedFile)) console.log(line)
  return changes.length > 0 && !changes.some((c) => c.regressed)
}

if (import.meta.main) {
  const [savedFile, currentFile] = process.argv.slice(2)
  if (!savedFile || !currentFile) {
    console.error('usage: node bench/compare.ts <saved>.json <new>.json')
    process.exit(2)
  }
  process.exit(guard(savedFile, JSON.parse(readFileSync(currentFile, 'utf8'))) ? 0 : 1)
}
