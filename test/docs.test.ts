// The documentation's shape (CONTRACT §23): a README of at most 400 lines that says where each
// topic lives, one guide per topic in docs/, and no relative link in any of them that leads
// nowhere (a file that is not there, or an anchor that no heading of that file makes).
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { test } from 'node:test'

const root = join(import.meta.dirname, '..')
const docs = join(root, 'docs')
const documents = [
  join(root, 'README.md'),
  join(root, 'examples', 'README.md'),
  join(root, 'bench', 'results', 'history.md'),
  ...readdirSync(docs)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(docs, name)),
]

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-')
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchor(m[1])))
}

test('the README is a manual of at most 400 lines', () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length
  assert.ok(lines <= 400, `README.md has ${lines} lines`)
})

test('the README names every guide in docs/, and each guide CONTRACT §23 lists exists', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8')
  for (const name of readdirSync(docs).filter((n) => n.endsWith('.md'))) {
    assert.ok(readme.includes(`(docs/${name})`), `README.md does not link docs/${name}`)
  }
  for (const guide of [
    'configuration',
    'openid-connect',
    'sso',
    'social-sign-in',
    'scim-and-import',
    'roles-and-organizations',
    'webhooks-and-hooks',
    'languages-and-branding',
    'deployment',
    'security-model',
    'operations',
    'performance',
  ]) {
    assert.ok(existsSync(join(docs, `${guide}.md`)), `docs/${guide}.md is missing`)
  }
})

test('every relative link of the README and the guides leads to a file and heading that exist', () => {
  const broken: string[] = []
  for (const file of documents) {
    const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '')
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const [path, hash] = target.split('#')
      const to = path ? join(dirname(file), path) : file
      // ../shared/ is the specification beside the repository, not in it.
      if (relative(root, to).startsWith('..')) continue
      if (!existsSync(to)) {
        broken.push(`${relative(root, file)}: ${target}`)
      } else if (hash && statSync(to).isFile() && to.endsWith('.md') && !anchorsOf(to).has(hash)) {
        broken.push(`${relative(root, file)}: ${target} (no such heading)`)
      }
    }
  }
  assert.deepEqual(broken, [])
})
