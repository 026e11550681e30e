// The compact common-password list (CONTRACT §4 weak-password rule) answers exactly as a Set
// of the package's list would.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { test } from 'node:test'
import * as fc from 'fast-check'
import { isCommonPassword, SortedWords } from './common-passwords.ts'

const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as {
  dictionary: Record<'passwords-common', string[]>
}
const reference = new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()))

test('rule: every password of the list is found, lower-cased', () => {
  assert.ok(reference.size > 40_000)
  for (const word of reference) assert.ok(isCommonPassword(word), word)
})

test('rule: a word is found exactly when a Set of the list holds it', () => {
  const near = [...reference].slice(0, 2000)
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.constantFrom(...near).map((w) => `${w}x`),
        fc.constantFrom(...near).map((w) => w.slice(0, -1)),
        fc.constantFrom('', '\n', 'password\n123456', 'zzzzzzzzzz', '\uffff'),
      ),
      (word) => isCommonPassword(word) === reference.has(word),
    ),
    { numRuns: 5000 },
  )
})

test('sorted words: duplicates, the empty list, and words around the ends', () => {
  const words = new SortedWords(['b', 'a', 'b', 'd'])
  assert.equal(words.size, 3)
  for (const w of ['a', 'b', 'd']) assert.ok(words.has(w))
  for (const w of ['', 'c', 'e', '0', 'ab', 'a\nb']) assert.ok(!words.has(w), w)
  assert.ok(!new SortedWords([]).has(''))
})
