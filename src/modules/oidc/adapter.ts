// oidc-provider's storage adapter for one tenant (STYLE, "panva's provider on one adapter
// table"): every model goes to oidc_models under this tenant's id, so any instance serves
// any step of a flow; `Client` is read from the applications table (clients.ts) and
// written there only by a dynamic registration (registration.ts).
// @ts-expect-error: oidc-provider ships no type declarations.
import { errors } from 'oidc-provider'
import { findClient } from './clients.ts'
import * as store from './queries.ts'
import { type RegistrationDeps, storeRegisteredClient } from './registration.ts'

export type AdapterDeps = RegistrationDeps

/** How oidc-provider names its single-use models in a grant error's detail. */
const SPENT: Record<string, string> = {
  AuthorizationCode: 'authorization code',
  RefreshToken: 'refresh token',
  DeviceCode: 'device code',
}

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

  /**
   * oidc-provider reads `consumed` before it consumes, so two concurrent redemptions of one
   * code or refresh token both find it unspent; only the one whose UPDATE marks it spent goes
   * on. The other is what a replay is (CONTRACT §11): the grant and all it issued are
   * revoked, and the request fails invalid_grant.
   */
  async consume(id: string): Promise<void> {
    const { db } = this.deps
    if (await store.consumeModel(db, this.tenantId, this.model, id)) return
    const spent = await store.findModel(db, this.tenantId, this.model, id)
    const grantId = spent?.grantId
    if (typeof grantId === 'string') {
      await store.revokeGrant(db, this.tenantId, grantId)
      await store.destroyModel(db, this.tenantId, 'Grant', grantId)
    }
    throw new errors.InvalidGrant(`${SPENT[this.model] ?? this.model} already consumed`)
  }

  async destroy(id: string): Promise<void> {
    await store.destroyModel(this.deps.db, this.tenantId, this.model, id)
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await store.revokeGrant(this.deps.db, this.tenantId, grantId)
  }
}
