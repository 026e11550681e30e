// The served OpenAPI document, checked the way a client generator reads it (part of
// `npm run lint`; `npm run openapi:generate` rewrites the committed types):
//   1. the app is built on a throw-away embedded database and GET /v1/openapi.json taken;
//   2. Redocly CLI lints it with redocly.yaml (the recommended rules): an error fails;
//   3. openapi-typescript generates its types, formatted as Biome formats the repository,
//      and `tsc --strict --noEmit` compiles them;
//   4. they must equal sdk/src/generated/openapi.ts, which the SDK builds on (with
//      --write, that file is rewritten instead).
// Nothing here reaches the network: Redocly's usage data and update notice are off.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'

const root = join(import.meta.dirname, '..')
export const GENERATED = join(root, 'sdk', 'src', 'generated', 'openapi.ts')
const REDOCLY = join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js')
// Nested in tools/openapi-codegen with the TypeScript 5 compiler API it is built on.
const OPENAPI_TYPESCRIPT = join(
  root,
  'tools',
  'openapi-codegen',
  'node_modules',
  'openapi-typescript',
  'bin',
  'cli.js',
)
const BIOME = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome')
const TSC = join(root, 'node_modules', 'typescript', 'bin', 'tsc')

const OFFLINE = {
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
}

/** The document GET /v1/openapi.json serves, from an app with only the defaults set. */
export async function servedDocument(dataDir: string): Promise<unknown> {
  // Only what the document needs: nothing of the caller's environment (a METRICS_TOKEN,
  // an identity provider) changes what is generated.
  const config = loadConfig({
    DATABASE_URL: 'memory://',
    DATA_DIR: dataDir,
    PUBLIC_URL: 'http://localhost:3000',
    JWT_SECRET: 'openapi-check-secret-openapi-check-secret',
    ENCRYPTION_KEYS: `v1:${Buffer.alloc(32, 1).toString('base64')}`,
    LOG_LEVEL: 'silent',
  })
  const { app } = await buildApp(config, { logger: false, purgeTimer: false, webhookWorker: false })
  try {
    const res = await app.inject({ method: 'GET', url: '/v1/openapi.json' })
    if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json: ${res.statusCode}`)
    return res.json()
  } finally {
    await app.close()
  }
}

function run(
  what: string,
  args: string[],
  options: { input?: string } = {},
): { stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, args, {
    cwd: root,
    input: options.input,
    encoding: 'utf8',
    env: { ...process.env, ...OFFLINE },
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.status !== 0) {
    process.stderr.write(result.stdout + result.stderr)
    throw new Error(`${what} failed (exit ${result.status ?? result.signal})`)
  }
  return { stdout: result.stdout, stderr: result.stderr }
}

if (import.meta.main) {
  const write = process.argv.includes('--write')
  const work = mkdtempSync(join(tmpdir(), 'openapi-check-'))
  try {
    const documentPath = join(work, 'openapi.json')
    writeFileSync(documentPath, JSON.stringify(await servedDocument(join(work, 'data')), null, 2))

    const lint = run('redocly lint', [REDOCLY, 'lint', '--config', 'redocly.yaml', documentPath])
    // The problems go to stdout, the tally to stderr: a pass shows the tally only.
    const tally = lint.stderr.trim().split('\n').slice(-1)[0]

    const raw = join(work, 'openapi.ts')
    run('openapi-typescript', [OPENAPI_TYPESCRIPT, documentPath, '--output', raw])
    const generated = run(
      'biome format',
      [BIOME, 'format', `--stdin-file-path=${relative(root, GENERATED)}`],
      { input: readFileSync(raw, 'utf8') },
    ).stdout
    const formatted = join(work, 'formatted.ts')
    writeFileSync(formatted, generated)
    run('tsc --strict', [
      TSC,
      '--ignoreConfig',
      '--strict',
      '--noEmit',
      '--target',
      'es2022',
      formatted,
    ])

    let committed: string | undefined
    try {
      committed = readFileSync(GENERATED, 'utf8')
    } catch {
      committed = undefined
    }
    if (write) {
      mkdirSync(dirname(GENERATED), { recursive: true })
      if (committed !== generated) writeFileSync(GENERATED, generated)
      console.log(
        `openapi: ${relative(root, GENERATED)} ${committed === generated ? 'unchanged' : 'written'}`,
      )
    } else if (committed !== generated) {
      console.error(
        `openapi: ${relative(root, GENERATED)} is stale: the document changed. Run npm run openapi:generate and commit it.`,
      )
      process.exitCode = 1
    } else {
      console.log(
        `openapi: redocly lint passed (${tally.replace(/\.$/, '') || 'no problem'}, see redocly.yaml)` +
          '; the generated types compile and are the committed ones',
      )
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
