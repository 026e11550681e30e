// oidc-provider's storage adapter for one tenant (STYLE, "panva's provider on one adapter
// table"): every model goes to oidc_models under this tenant's id, so any instance serves
// any step of a flow; `Client` is read from the applications table (clients.ts) and
// written there only by a dynamic registration (registration.ts).
import { findClient } from './clients.ts'
import * as store from './queries.ts'
import { type RegistrationDeps, storeRegisteredClient } from './registration.ts'

export type AdapterDeps = RegistrationDeps

/** The oidc-provider Adapter interface, for one (tenant, model). */
export class TenantAdapter {
  readonly deps: AdapterDeps
  readonly tenantId: string
  readonly model: string

  constructor(deps: AdapterDeps, tenantId: string, model: string) {
    this.deps = deps
    this.tenantId = tenantId
    this.model = model
  }

  async upsert(id: string, payload: store.ModelPayload, expiresIn?: number): Promise<void> {
    if (this.model === 'Client') return storeRegisteredClient(this.deps, this.tenantId, payload)
    await store.upsertModel(this.deps.db, this.tenantId, this.model, id, payload, expiresIn)
  }

  async find(id: string): Promise<store.ModelPayload | undefined> {
    if (this.model === 'Client') {
      return findClient(this.deps.db, this.deps.cipher, this.tenantId, id)
    }
    return store.findModel(this.deps.db, this.tenantId, this.model, id)
  }

  async findByUid(uid: string) {
    return store.findModelByUid(this.deps.db, this.tenantId, this.model, uid)
  }

  async findByUserCode(userCode: string) {
    return store.findModelByUserCode(this.deps.db, this.tenantId, this.model, userCode)
  }

  async consume(id: string): Promise<void> {
    await store.consumeModel(this.deps.db, this.tenantId, this.model, id)
  }

  async destroy(id: string): Promise<void> {
    await store.destroyModel(this.deps.db, this.tenantId, this.model, id)
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await store.revokeGrant(this.deps.db, this.tenantId, grantId)
  }
}
