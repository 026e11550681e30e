// Development secrets and keys (CONTRACT §1, §10, §11): generated on the first start outside
// production, kept in DATA_DIR (mode 0600) and read back on every later one, so that a
// restart keeps sessions, encrypted fields and signed tokens valid. Production never
// generates any: it refuses to start without them (config.ts).
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { AsymmetricAlgorithm } from '../lib/jwt.ts'
import { loadDevKeys } from '../lib/pem-keys.ts'

export interface DevSecrets {
  jwtSecret: string
  encryptionKeys: string
}

let devSecretsCache: { dir: string; secrets: DevSecrets } | undefined

/** JWT_SECRET and ENCRYPTION_KEYS of development: generated once, then read back. */
export function loadDevSecrets(dataDir: string): DevSecrets {
  if (devSecretsCache?.dir === dataDir) return devSecretsCache.secrets
  const file = join(dataDir, 'dev-secrets.json')
  let secrets: DevSecrets
  try {
    secrets = JSON.parse(readFileSync(file, 'utf8')) as DevSecrets
  } catch {
    secrets = {
      jwtSecret: randomBytes(48).toString('base64url'),
      encryptionKeys: `v1:${randomBytes(32).toString('base64')}`,
    }
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, JSON.stringify(secrets, null, 2), { mode: 0o600, flag: 'wx' })
  }
  devSecretsCache = { dir: dataDir, secrets }
  return secrets
}

/** The development signing key of `alg` (JWT_PRIVATE_KEYS unset). */
export function loadDevJwtKey(dataDir: string, alg: AsymmetricAlgorithm): string {
  return loadDevKeys(dataDir, `dev-jwt-${alg.toLowerCase()}.pem`, () => [
    alg === 'ES256'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
      : generateKeyPairSync('ed25519').privateKey,
  ])
}
