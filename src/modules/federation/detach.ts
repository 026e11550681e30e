// What another module asks of the SSO connections (docs/ARCHITECTURE.md: a module reads or
// changes another's data through the file that module exports for it): the organizations
// module, deleting an organization (CONTRACT §18), detaches the connections that name it.
import type { Handle } from '../../db/client.ts'
import * as store from './queries.ts'

/**
 * The tenant's SSO connections whose sign-ins join `organizationId` join none from now (its
 * row locked by the caller, so none can come to name it meanwhile); answers their ids.
 */
export function detachOrganization(
  tx: Handle,
  tenantId: string,
  organizationId: string,
  now: Date,
): Promise<string[]> {
  return store.detachOrganization(tx, tenantId, organizationId, now)
}
