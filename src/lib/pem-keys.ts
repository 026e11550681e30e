// PEM private keys as JWT_PRIVATE_KEYS and OIDC_SIGNING_KEYS take them (CONTRACT §1, §11),
// and the development keys generated in DATA_DIR when they are unset. Each caller adds its
// own rule on which keys it accepts (lib/jwt.ts, lib/oidc-keys.ts).
import { createPrivateKey, type KeyObject } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g

/**
 * PEM private keys (PKCS#8 `PRIVATE KEY`, or SEC1 `EC PRIVATE KEY`) written one after the
 * other, newest first. Environment files that cannot hold line breaks may write them as
 * `\n`. `EC PARAMETERS` blocks (openssl ecparam) are skipped. `check` sees each key in
 * order with its position (from 1) and answers why it is refused, or undefined. Answers
 * the keys as PKCS#8 PEM, or the first problem, naming the block that is wrong.
 */
export function parsePemPrivateKeys(
  raw: string,
  check: (key: KeyObject, n: number) => string | undefined,
): { keys: string[] } | { problem: string } {
  const text = raw.replace(/\\n/g, '\n')
  if (text.replace(PEM_BLOCK, '').trim() !== '') {
    return { problem: 'expected PEM private keys (-----BEGIN PRIVATE KEY-----…), newest first' }
  }
  const blocks = [...text.matchAll(PEM_BLOCK)].filter((m) => m[1] !== 'EC PARAMETERS')
  if (blocks.length === 0) return { problem: 'at least one PEM private key is required' }
  const keys: string[] = []
  for (const [i, block] of blocks.entries()) {
    const n = i + 1
    let key: KeyObject
    try {
      key = createPrivateKey(block[0])
    } catch {
      return { problem: `key ${n} is not an unencrypted PEM private key` }
    }
    const problem = check(key, n)
    if (problem) return { problem }
    // The same private key always exports to the same PKCS#8 PEM, whatever its encoding.
    const pem = key.export({ type: 'pkcs8', format: 'pem' }).toString()
    if (keys.includes(pem)) return { problem: `key ${n} appears twice` }
    keys.push(pem)
  }
  return { keys }
}

/**
 * Development keys: the PEM file `name` in DATA_DIR, written from `generate` on the first
 * start and read back on every later one.
 */
export function loadDevKeys(dataDir: string, name: string, generate: () => KeyObject[]): string {
  const file = join(dataDir, name)
  try {
    return readFileSync(file, 'utf8')
  } catch {
    const pem = generate()
      .map((k) => k.export({ type: 'pkcs8', format: 'pem' }))
      .join('')
    mkdirSync(dataDir, { recursive: true })
    try {
      writeFileSync(file, pem, { mode: 0o600, flag: 'wx' })
      return pem
    } catch {
      // Another process starting at the same moment wrote it first: use theirs.
      return readFileSync(file, 'utf8')
    }
  }
}
