// The email rule is one pattern the OpenAPI document publishes (src/lib/email.ts). It lists
// control and format characters as explicit ranges, so that every JSON Schema tool reads it
// alike; this holds the list to Unicode's Cc and Cf as the running Node knows them (a newer
// Unicode with a new format character fails here until the list has it).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isEmail } from './email.ts'

test('an address refuses exactly white space, @, and the Cc and Cf characters inside it', () => {
  const refused = /[\s@\p{Cc}\p{Cf}]/u
  const wrong: string[] = []
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue
    const char = String.fromCodePoint(c)
    if (isEmail(`a${char}b@example.com`) === refused.test(char)) wrong.push(c.toString(16))
  }
  assert.deepEqual(wrong, [], 'code points the rule and Unicode disagree on')
  // Lone surrogates are refused too (CONTRACT §8), a pair (one character) is not.
  assert.equal(isEmail('a\ud800@example.com'), false)
  assert.equal(isEmail('a\udfff@example.com'), false)
  assert.equal(isEmail('a💥@example.com'), true)
})

test('white space around an address is trimmed, so it is allowed there, unless Cc or Cf', () => {
  assert.equal(isEmail('  ada@example.com\u3000\u00a0'), true)
  assert.equal(isEmail('\tada@example.com'), false)
  assert.equal(isEmail('ada@example.com\ufeff'), false)
  assert.equal(isEmail('ada@example.com\n'), false)
})

test('the lengths: 1 to 64 before the @, 254 characters in all', () => {
  assert.equal(isEmail(`${'a'.repeat(64)}@example.com`), true)
  assert.equal(isEmail(`${'a'.repeat(65)}@example.com`), false)
  assert.equal(isEmail('@example.com'), false)
  const domain = `${'b'.repeat(240)}.io`
  assert.equal(isEmail(`${'a'.repeat(254 - domain.length - 1)}@${domain}`), true)
  assert.equal(isEmail(`${'a'.repeat(255 - domain.length - 1)}@${domain}`), false)
  // Characters, not UTF-16 units: one beyond U+FFFF counts once.
  assert.equal(isEmail(`a@${'💥'.repeat(200)}.io`), true)
  assert.equal(isEmail('a@io'), false)
  assert.equal(isEmail('a@b.c'), true) // a dot inside the domain is all it asks
  assert.equal(isEmail('a@.io'), false)
})
