// Single use of client assertion and DPoP proof `jti`s (RFC 7523 §3 item 7, RFC 9449 §11.1).
// oidc-provider's ReplayDetection.unique finds the value, then saves it: two concurrent
// requests with one assertion both find nothing and both pass. Replaced here by one
// INSERT ... ON CONFLICT of the tenant's oidc_models (queries.ts, recordOnce): exactly one
// of them records it, the other is the replay the library then refuses.
import { hash } from 'node:crypto'
import type { Handle } from '../../db/client.ts'
import { recordOnce } from './queries.ts'

interface WithReplayDetection {
  ReplayDetection: { unique(iss: string, jti: string, exp: number): Promise<boolean> }
}

export function atomicReplayDetection(provider: unknown, db: Handle, tenantId: string): void {
  const { ReplayDetection } = provider as WithReplayDetection
  Object.defineProperty(ReplayDetection, 'unique', {
    value: (iss: string, jti: string, exp: number) => {
      // The library's id, so a row reads the same whoever wrote it.
      const id = hash('sha256', `${iss}${jti}`, 'base64url')
      const expiresIn = exp - Math.floor(Date.now() / 1000)
      return recordOnce(db, tenantId, 'ReplayDetection', id, { jti: id, iss }, expiresIn)
    },
  })
}
