// Property-based fuzzing of every operation the service describes in GET /v1/openapi.json
// (CONTRACT §3 and §8): for thousands of generated requests per operation (hostile path
// segments, query strings, credentials, headers and bodies, built from the operation's own
// schemas and the fixtures' real emails, tokens and ids) the answer is never a 5xx, its
// status is one the operation documents (or one any request may earn), every error is the
// envelope with the code its status implies, and a refused request changes no row of the
// tenants' tables.
//
// Left out on purpose: requests that stall (the 408 of CONTRACT §8 takes 30 s each); a
// whole IdP sign-in (a valid state and code cannot be guessed); what a refusal may change
// by design (audit rows, attempt counters: fuzz/snapshot.ts); and statuses any route may
// answer (fuzz/check.ts). Successes that spend or revoke a fixture are not left out: the
// fixture is repaired after them (fuzz/world.ts).
//
// FUZZ_RUNS  requests per operation (default 150; `npm run fuzz` sends 3000)
// FUZZ_SEED  the base seed (default fixed, so CI is repeatable); each operation derives its own
// FUZZ_ONLY  one operation's key, such as `POST /v1/{tenantSlug}/auth/login`
// FUZZ_PATH  with FUZZ_SEED and FUZZ_ONLY: replays the counter-example a failure printed
// FUZZ_COLLECT  a file path: record every counter-example there instead of failing at the
//            first one (a survey for whoever fixes them; the suite itself always asserts)
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { after, describe, test } from 'node:test'
import * as fc from 'fast-check'
import { judge } from './fuzz/check.ts'
import { materialize, type Operation, type RequestSpec, requestSpec } from './fuzz/request.ts'
import { Snapshots } from './fuzz/snapshot.ts'
import { send, type WireRequest, type WireResponse } from './fuzz/wire.ts'
import { World } from './fuzz/world.ts'
import { startServer } from './helpers.ts'
import { startOidcProvider } from './oidc-provider.ts'

const RUNS = Number(process.env.FUZZ_RUNS || 150)
const SEED = Number(process.env.FUZZ_SEED || 20_250_617)
const ONLY = process.env.FUZZ_ONLY
const PATH = process.env.FUZZ_PATH || undefined
const COLLECT = process.env.FUZZ_COLLECT

// A real OpenID provider, so the IdP routes get past `idp_not_configured`.
const idp = await startOidcProvider()
const server = await startServer({
  idp: {
    issuer: idp.issuer,
    authorizationUrl: undefined,
    tokenUrl: undefined,
    userinfoUrl: undefined,
    scopes: 'openid email',
  },
})
after(async () => {
  await server.close()
  await idp.close()
})
const port = (server.app.server.address() as AddressInfo).port
const world = await World.create(server, idp)
const snapshots = new Snapshots(server.deps.db)
const operations = await describedOperations()
const findings = new Map<string, { count: number; example: string }>()
/** With FUZZ_COLLECT: how often each operation answered each status and reason. */
const answers: Record<string, Record<string, number>> = {}

/** The last fingerprint of the fixtures' rows, while nothing has changed them since. */
let known: Record<string, string> | undefined

describe('every documented operation, fuzzed', () => {
  for (const op of operations) {
    test(op.key, { timeout: Math.max(120_000, RUNS * 400) }, async () => {
      const details = await fc.check(
        fc.asyncProperty(requestSpec(op), (spec) => exercise(op, spec)),
        { numRuns: RUNS, seed: seedFor(op), path: PATH },
      )
      if (!details.failed) return
      const cause = details.errorInstance instanceof Error ? details.errorInstance.message : ''
      throw new Error(
        `failed after ${details.numRuns} requests (shrunk ${details.numShrinks} times): ${cause}\n` +
          `  generated: ${clip(fc.stringify(details.counterexample), 1000)}\n` +
          `  replay: FUZZ_SEED=${SEED} FUZZ_ONLY='${op.key}' FUZZ_PATH='${details.counterexamplePath}' ` +
          `npm test -- test/fuzz.test.ts (seed ${details.seed})`,
      )
    })
  }
})

after(() => {
  if (!COLLECT) return
  const list = [...findings].map(([key, f]) => ({ key, ...f }))
  writeFileSync(COLLECT, JSON.stringify({ findings: list, answers }, null, 2))
})

/** Sends one generated request and checks its answer; throws what it found wrong. */
async function exercise(op: Operation, spec: RequestSpec): Promise<void> {
  if (await world.freshen()) known = undefined
  const request = materialize(op, spec, world)
  known ??= await snapshots.take(world.tenantIds())
  const slug = requestedSlug(op, request)
  const fresh = slug !== undefined && !(await world.tenantExists(slug))
  const res = await send(port, request)
  const verdict = judge(op, res)
  if (COLLECT) {
    answers[op.key] ??= {}
    const tally = answers[op.key]
    const issue = verdict.reason === 'validation' ? firstIssue(res) : ''
    const answer = `${res.status} ${verdict.reason ?? ''} ${issue}`.trim()
    tally[answer] = (tally[answer] ?? 0) + 1
  }
  if (res.status >= 400 && res.status < 500) {
    // A refused request changes nothing (audit rows aside: see fuzz/snapshot.ts).
    const now = await snapshots.take(world.tenantIds())
    const changed = Object.keys(now).filter((table) => now[table] !== known?.[table])
    if (changed.length > 0) verdict.problems.push(`refused, yet changed ${changed.join(', ')}`)
    if (fresh && (await world.tenantExists(slug))) verdict.problems.push('refused, yet created')
    known = now
  } else if (res.status < 300 || res.status >= 500) {
    // A success may spend or revoke a fixture; after a 5xx nothing is known.
    known = undefined
    if (op.method !== 'GET') await world.heal()
  }
  if (verdict.problems.length === 0) return
  const example = `${describeRequest(request)}\n  → ${describeResponse(res)}`
  const message = `${verdict.problems.join('; ')}\n  ${example}`
  if (!COLLECT) throw new Error(message)
  const key = `${op.key} | ${res.status} ${verdict.reason ?? '-'} | ${verdict.problems.join('; ')}`
  const seen = findings.get(key)
  if (!seen || example.length < seen.example.length) {
    findings.set(key, { count: (seen?.count ?? 0) + 1, example })
  } else seen.count++
}

/** POST /v1/tenants: the slug it asks for, whose tenant a refusal must not create. */
function requestedSlug(op: Operation, request: WireRequest): string | undefined {
  if (op.key !== 'POST /v1/tenants' || !request.body) return undefined
  try {
    const slug = JSON.parse(request.body.toString('utf8'))?.tenant?.slug
    return typeof slug === 'string' ? slug : undefined
  } catch {
    return undefined
  }
}

function describeRequest(r: WireRequest): string {
  const headers = r.headers
    .filter(([name, value]) => name !== 'x-forwarded-for' || !/^[\d.]+$/.test(value))
    .map(([name, value]) => `${name}: ${clip(JSON.stringify(value))}`)
  const body = r.body ? clip(JSON.stringify(r.body.toString('latin1'))) : '(none)'
  return `${r.method} ${clip(JSON.stringify(r.target))} ${headers.join(' ')} body=${body}`
}

function describeResponse(res: WireResponse): string {
  return `${res.status} ${clip(res.body.toString('utf8'))}`
}

/** The first field a validation error names (a tally's detail). */
function firstIssue(res: WireResponse): string {
  try {
    return JSON.parse(res.body.toString('utf8')).details?.issues?.[0]?.path ?? ''
  } catch {
    return ''
  }
}

function clip(s: string, max = 240): string {
  return s.length > max ? `${s.slice(0, max)}…(${s.length} chars)` : s
}

function seedFor(op: Operation): number {
  return createHash('sha256').update(`${SEED}:${op.key}`).digest().readInt32LE(0)
}

/** Every operation of the served OpenAPI document, writes after reads and DELETEs last. */
async function describedOperations(): Promise<Operation[]> {
  const res = await server.request('GET', '/v1/openapi.json')
  const rank = ['get', 'post', 'put', 'patch', 'delete']
  const ops: Operation[] = []
  for (const [path, item] of Object.entries<Record<string, any>>(res.body.paths)) {
    for (const [method, spec] of Object.entries<any>(item)) {
      if (!rank.includes(method)) continue
      ops.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        params: (spec.parameters ?? []).map((p: any) => ({
          name: p.name,
          in: p.in,
          schema: p.schema ?? {},
        })),
        body: spec.requestBody?.content?.['application/json']?.schema,
        statuses: Object.keys(spec.responses ?? {}).map(Number),
      })
    }
  }
  ops.sort((a, b) => rank.indexOf(a.method.toLowerCase()) - rank.indexOf(b.method.toLowerCase()))
  if (!ONLY) return ops
  const exact = ops.filter((op) => op.key === ONLY)
  return exact.length > 0 ? exact : ops.filter((op) => op.key.includes(ONLY))
}
