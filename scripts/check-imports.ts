// npm run lint, after Biome: the import graph of src/ has no cycle (type-only imports
// included: a cycle of types still ties two modules together), and no file of the service
// imports test code. Prints each cycle found and exits 1.
import { globSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]/gm

export function importGraph(root: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of globSync(`${root}/**/*.ts`)) {
    if (file.endsWith('.test.ts')) continue
    const text = readFileSync(file, 'utf8')
    const targets = [...text.matchAll(IMPORT)].map((m) => normalize(join(dirname(file), m[1])))
    graph.set(normalize(file), targets)
  }
  return graph
}

export function findCycles(graph: Map<string, string[]>): string[][] {
  const cycles: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return cycles
}

if (import.meta.main) {
  const graph = importGraph('src')
  const problems: string[] = []
  for (const cycle of findCycles(graph)) problems.push(`import cycle: ${cycle.join(' -> ')}`)
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (target.startsWith('test/')) problems.push(`${file} imports test code: ${target}`)
    }
  }
  // Drizzle's values come from src/db/orm.ts, which loads its CommonJS build (see there).
  const DRIZZLE_VALUES = /^\s*import\s+(?!type\s)[^'"]*?from\s+['"]drizzle-orm[^'"]*['"]/m
  for (const file of globSync('{src,test,scripts,bench}/**/*.ts')) {
    if (normalize(file) === normalize('src/db/orm.ts')) continue
    if (DRIZZLE_VALUES.test(readFileSync(file, 'utf8'))) {
      problems.push(`${file} imports values from drizzle-orm: import them from src/db/orm.ts`)
    }
  }
  for (const problem of problems) console.error(problem)
  console.log(`imports: ${graph.size} files, ${problems.length} problems`)
  process.exitCode = problems.length > 0 ? 1 : 0
}
