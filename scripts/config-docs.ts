// npm run docs:config: writes docs/configuration.md, the configuration reference, from the
// environment's schema (src/config/schema.ts). test/config-reference.test.ts fails when the
// committed page differs from what this renders (CONTRACT §23).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ENV_SCHEMA } from '../src/config/schema.ts'
import { GROUPS, type Variable } from '../src/config/variables.ts'

export const REFERENCE = join(import.meta.dirname, '..', 'docs', 'configuration.md')

const INTRO = `# Configuration reference

<!-- Written by \`npm run docs:config\` from src/config/schema.ts: edit the schema, not this page. -->

The service reads these environment variables once, at start (\`src/config.ts\`, through the
schema in \`src/config/schema.ts\`). An unset or empty variable takes its default. A value that
does not fit stops the process before it listens, with one line per mistake naming the
variable (CONTRACT §1), for example:

\`\`\`
config error: PORT: must be an integer from 0 to 65535
\`\`\`

\`NODE_ENV=production\` refuses to start without the variables marked **required in
production**, or with those marked **refused in production** set to \`true\`, and never
generates a development secret. Those marked **secret** belong in a secret store (a
Kubernetes Secret: \`deploy/kubernetes/\`), never in a manifest, an image or a log.
`

const GROUP_NOTES: Partial<Record<(typeof GROUPS)[number], string>> = {
  'Rate limits':
    'Each budget is `POINTS/SECONDS` (both at least 1). A 429 carries `Retry-After`; every check takes its point before the work, so a burst of parallel attempts never gets more tries than the budget. With `REDIS_URL` the buckets live in Redis, with an in-memory bucket taking over while Redis is unreachable.',
  'Start (read before the configuration)':
    'Read by the start itself (`src/server.ts`, `src/strip-cache.js`) or by Node before `src/config.ts` runs, so never checked by it.',
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

function defaultOf(variable: Variable): string {
  if (variable.shown) return variable.shown
  return variable.default === undefined ? 'unset' : `\`${variable.default}\``
}

function meaning(variable: Variable): string {
  const marks = [
    variable.secret ? '**Secret.**' : '',
    variable.production === 'required' ? '**Required in production.**' : '',
    variable.production === 'refused' ? '**Refused in production.**' : '',
  ].filter(Boolean)
  const description = variable.description.replace(/([^.])$/, '$1.')
  return [...marks, description].join(' ')
}

/** The reference page, as the schema describes every variable. */
export function renderReference(): string {
  const variables = Object.entries(ENV_SCHEMA.properties) as [string, Variable][]
  const sections = GROUPS.map((group) => {
    const rows = variables
      .filter(([, v]) => v.group === group)
      .map(
        ([name, v]) =>
          `| \`${name}\` | ${cell(v.kind)} | ${cell(defaultOf(v))} | ${cell(meaning(v))} | ${v.contract ?? ''} |`,
      )
    const note = GROUP_NOTES[group] ? `${GROUP_NOTES[group]}\n\n` : ''
    return [
      `## ${group}\n`,
      `${note}| Variable | Type | Default | Meaning | CONTRACT |`,
      '| --- | --- | --- | --- | --- |',
      ...rows,
    ].join('\n')
  })
  return `${[INTRO, ...sections].join('\n\n')}\n`
}

if (import.meta.main) {
  const rendered = renderReference()
  if (process.argv.includes('--check')) {
    if (readFileSync(REFERENCE, 'utf8') !== rendered) {
      console.error('docs/configuration.md is stale: run npm run docs:config')
      process.exit(1)
    }
  } else {
    writeFileSync(REFERENCE, rendered)
    console.log(`wrote ${REFERENCE}`)
  }
}
