// Every shell example the README and the guides mark runnable (a fence opened with
// ```sh runnable) is run by bash against a live service (CONTRACT §23), as a reader would
// paste it: $BASE is the service, $ACCESS_TOKEN an Admin's access token and $API_KEY an API
// key of a fresh tenant, whose slug stands wherever the example writes `acme`. `curl` fails
// on an HTTP error (--fail-with-body), and so does the block (set -euo pipefail).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { before, type TestContext, test } from 'node:test'
import { createKey } from './fixtures/apikeys.ts'
import { startBehindLocalhost } from './fixtures/secure-origin.ts'
import { createTenant, type TestServer } from './helpers.ts'

const root = join(import.meta.dirname, '..')
const documents = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name)),
]

/** bash -c `script`, asynchronously: the service answering it runs in this process. */
function bash(script: string, env: Record<string, string>) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
    execFile(
      'bash',
      ['-c', script],
      { encoding: 'utf8', timeout: 60_000, env },
      (error, stdout, stderr) =>
        done({
          status: error ? (typeof error.code === 'number' ? error.code : 1) : 0,
          stdout,
          stderr,
        }),
    )
  })
}

interface Block {
  file: string
  line: number
  code: string
}

/** The ```sh runnable blocks of a Markdown text, with the line each starts on. */
export function runnableBlocks(file: string, text: string): Block[] {
  const blocks: Block[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*```sh runnable\s*$/.test(lines[i])) continue
    const start = i + 1
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]));
    blocks.push({ file, line: start, code: lines.slice(start, i).join('\n') })
  }
  return blocks
}

const blocks = documents.flatMap((file) =>
  runnableBlocks(relative(root, file), readFileSync(file, 'utf8')),
)

/** What every block runs under: any failure ends it, and so does an HTTP error. */
const PRELUDE =
  'set -euo pipefail\ncurl() { command curl --silent --show-error --fail-with-body "$@"; }'

let server: TestServer
let base: string

before(async (ctx) => {
  ;({ server, publicUrl: base } = await startBehindLocalhost(ctx as TestContext))
})

test('the documents mark runnable examples, and the marker is read as written', () => {
  assert.ok(blocks.length >= 2, `only ${blocks.length} runnable blocks found`)
  assert.deepEqual(
    runnableBlocks('x.md', 'a\n```sh runnable\necho 1\necho 2\n```\n```sh\nno\n```'),
    [{ file: 'x.md', line: 2, code: 'echo 1\necho 2' }],
  )
})

for (const block of blocks) {
  test(`${block.file}:${block.line} runs against a live service`, async () => {
    const t = await createTenant(server)
    const key = await createKey(server, t.slug, t.admin.accessToken)
    const script = `${PRELUDE}\n${block.code.replace(/\bacme\b/g, t.slug)}`
    const done = await bash(script, {
      PATH: process.env.PATH ?? '',
      BASE: base,
      ACCESS_TOKEN: t.admin.accessToken,
      API_KEY: key.plaintext,
    })
    assert.equal(done.status, 0, `${block.file}:${block.line}\n${done.stdout}\n${done.stderr}`)
  })
}

test('a failing example fails its block: curl on an HTTP error, and any failing command', async () => {
  for (const code of ['curl -s $BASE/v1/nobody/me', 'false; echo never']) {
    const done = await bash(`${PRELUDE}\n${code}`, { PATH: process.env.PATH ?? '', BASE: base })
    assert.notEqual(done.status, 0, code)
  }
})
