// Fixtures for the invitation tests (test-only; nothing in the service imports this file).
import type { TestServer } from '../../../test/helpers.ts'
import { users } from '../../db/schema.ts'
import { normalizeEmail } from '../../lib/email.ts'
import { uuidv7 } from '../../lib/ids.ts'

/**
 * Inserts the Pending user a passwordless JIT sign-up leaves behind (no password, address
 * not verified, never signed in), as request-login-code does; answers its id.
 */
export async function insertPendingUser(
  server: Pick<TestServer, 'deps' | 'clock'>,
  tenantId: string,
  email: string,
): Promise<string> {
  const now = server.clock.now()
  const id = uuidv7(now.getTime())
  await server.deps.db.insert(users).values({
    tenantId,
    id,
    email,
    emailNormalized: normalizeEmail(email),
    passwordHash: null,
    status: 'Pending',
    role: 'Member',
    emailVerified: false,
    createdAt: now,
    updatedAt: now,
  })
  return id
}
