// The common-password list of the weak-password rule (CONTRACT §4): the 49,000-odd most
// common passwords of @zxcvbn-ts/language-common, lower-cased.
//
// The package holds its lists as arrays of strings (the diceware words beside them), about
// 4 MB for the life of the process once imported, and a Set of the lower-cased copies was
// as much again. Here the list is read once through require, copied into one sorted string
// with the offsets of its entries (about 0.6 MB, searched by halves: 16 comparisons), and
// the package is dropped from require's cache, so that its arrays are collected (issue 10,
// resident memory).
import { createRequire } from 'node:module'

export class SortedWords {
  private readonly text: string
  /** Where each entry starts in `text`; one more at the end, past the last separator. */
  private readonly starts: Uint32Array

  constructor(words: Iterable<string>) {
    const sorted = [...new Set(words)].sort()
    this.text = `${sorted.join('\n')}\n`
    this.starts = new Uint32Array(sorted.length + 1)
    let at = 0
    sorted.forEach((word, i) => {
      this.starts[i] = at
      at += word.length + 1
    })
    this.starts[sorted.length] = at
  }

  get size(): number {
    return this.starts.length - 1
  }

  has(word: string): boolean {
    let low = 0
    let high = this.size - 1
    while (low <= high) {
      const mid = (low + high) >>> 1
      const entry = this.text.slice(this.starts[mid], this.starts[mid + 1] - 1)
      if (entry === word) return true
      if (entry < word) low = mid + 1
      else high = mid - 1
    }
    return false
  }
}

let common: SortedWords | undefined

/** Whether `lowered` (a password, NFC and lower-cased) is on the list. */
export function isCommonPassword(lowered: string): boolean {
  common ??= loadCommonPasswords()
  return common.has(lowered)
}

function loadCommonPasswords(): SortedWords {
  const require = createRequire(import.meta.url)
  const { dictionary } = require('@zxcvbn-ts/language-common') as {
    dictionary: Record<'passwords-common', string[]>
  }
  const words = new SortedWords(dictionary['passwords-common'].map((p) => p.toLowerCase()))
  for (const path of Object.keys(require.cache)) {
    if (path.includes('/@zxcvbn-ts/')) delete require.cache[path]
  }
  return words
}
