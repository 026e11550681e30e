// The served OpenAPI document, checked the way a client generator reads it (part of
// `npm run lint`; `npm run openapi:generate` rewrites the committed types):
//   1. the app is built on a throw-away embedded database and GET /v1/openapi.json taken;
//   2. Redocly CLI lints it with redocly.yaml (the recommended rules): an error fails;
//   3. openapi-typescript generates its types, formatted as Biome formats the repository,
//      and `tsc --strict --noEmit` compiles them;
//   4. they must equal sdk/src/generated/openapi.ts, which the SDK builds on (with
//      --write, that file is rewritten instead);
//   5. the event list of docs/webhooks-and-hooks.md must be what the typed map of events
//      renders (`renderEventList`; --write rewrites it too; test/webhook-events.test.ts
//      holds it as well).
// Nothing here reaches the network: Redocly's usage data and update notice are off.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { buildApp } from '../src/app.ts'
import { loadConfig } from '../src/config.ts'
import { WEBHOOK_EVENT_SCHEMAS } from '../src/modules/webhooks/events.ts'

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

export const WEBHOOK_DOCS = join(root, 'docs', 'webhooks-and-hooks.md')
const LIST_BEGIN = '<!-- events: begin (npm run openapi:generate writes this list) -->'
const LIST_END = '<!-- events: end -->'

type Json = Record<string, unknown>

/** A JSON schema as a short type: `string`, `date-time`, `string[]`, `string | null`... */
export function typeText(schema: Json): string {
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((s) => typeText(s as Json)).join(' | ')
  if ('const' in schema) return JSON.stringify(schema.const)
  if (schema.type === 'string') return schema.format === 'date-time' ? 'date-time' : 'string'
  if (schema.type === 'array') return `${typeText(schema.items as Json)}[]`
  if (schema.type === 'object' && schema.patternProperties) {
    const [value] = Object.values(schema.patternProperties as Record<string, Json>)
    return `{[field]: ${typeText(value)}}`
  }
  if (schema.type === 'object') return `{${fieldsText(schema)}}`
  if (typeof schema.type === 'string') return schema.type
  return 'any'
}

/** An object schema's fields: `name: type`, `name?: type` when optional. */
function fieldsText(schema: Json): string {
  const required = new Set((schema.required as string[] | undefined) ?? [])
  return Object.entries((schema.properties as Record<string, Json> | undefined) ?? {})
    .map(([name, field]) => `${name}${required.has(name) ? '' : '?'}: ${typeText(field)}`)
    .join(', ')
}

/** The metadata schema inside an event type's body schema (`data.event.metadata`). */
export function metadataSchemaOf(body: Json): Json {
  const data = (body.properties as Record<string, Json>).data
  const event = (data.properties as Record<string, Json>).event
  return (event.properties as Record<string, Json>).metadata
}

/** The event list of docs/webhooks-and-hooks.md: a table row per event type of the map. */
export function renderEventList(): string {
  const rows = [...WEBHOOK_EVENT_SCHEMAS].map(([type, schema]) => {
    const body = JSON.parse(JSON.stringify(schema)) as Json
    const metadata = metadataSchemaOf(body)
    const fields = fieldsText(metadata) || 'none'
    const more = metadata.additionalProperties === false ? '' : ', and more'
    const cell = `\`${fields.replace(/\|/g, '\\|')}\`${more}`.replace('`none`', 'none')
    return `| \`${type}\` | ${body.description} | ${cell} |`
  })
  return [
    LIST_BEGIN,
    '',
    '| Event (`type`) | When | `data.event.metadata` |',
    '| --- | --- | --- |',
    ...rows,
    '',
    LIST_END,
  ].join('\n')
}

/** The page with its event list replaced by `list`. */
export function withEventList(page: string, list: string): string {
  const begin = page.indexOf(LIST_BEGIN)
  const end = page.indexOf(LIST_END)
  if (begin < 0 || end < begin) throw new Error(`${WEBHOOK_DOCS}: no event list markers`)
  return page.slice(0, begin) + list + page.slice(end + LIST_END.length)
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
    const page = readFileSync(WEBHOOK_DOCS, 'utf8')
    const listed = withEventList(page, renderEventList())
    if (write && listed !== page) {
      writeFileSync(WEBHOOK_DOCS, listed)
      console.log(`openapi: ${relative(root, WEBHOOK_DOCS)}'s event list written`)
    } else if (listed !== page) {
      console.error(
        `openapi: ${relative(root, WEBHOOK_DOCS)}'s event list is stale: the map of events changed. Run npm run openapi:generate and commit it.`,
      )
      process.exitCode = 1
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
