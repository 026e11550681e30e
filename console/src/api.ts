// The console's connection to the service: one SDK session client per tenant, its tokens
// in sessionStorage (this tab only, gone when the tab closes), refreshed by the SDK.
import { createContext, useContext } from 'react'
import { AuthServiceError } from '../../sdk/src/errors.ts'
import type { components } from '../../sdk/src/generated/openapi.ts'
import { createSessionClient, type SessionClient } from '../../sdk/src/session.ts'
import { localStorageStore } from '../../sdk/src/stores.ts'

export { AuthServiceError }
export type Schemas = components['schemas']

export function connect(tenant: string): SessionClient {
  return createSessionClient({
    baseUrl: window.location.origin,
    tenant,
    store: localStorageStore(window.sessionStorage),
  })
}

export interface ConsoleContext {
  tenant: string
  session: SessionClient
  signOut(): void
}

export const Console = createContext<ConsoleContext | null>(null)

export function useConsole(): ConsoleContext {
  const value = useContext(Console)
  if (!value) throw new Error('useConsole outside the signed-in console')
  return value
}

/** An error of the service in plain words (the envelope's message, and when to retry). */
export function describeError(error: unknown): string {
  if (error instanceof AuthServiceError) {
    if (error.status === 429) {
      return `Too many requests. Try again in ${error.retryAfter ?? 60} seconds.`
    }
    const issues = error.details?.issues as { path: string; message: string }[] | undefined
    if (issues?.length) {
      return issues.map((i) => `${i.path.replace(/^body\./, '')}: ${i.message}`).join('; ')
    }
    return error.message
  }
  return error instanceof Error ? error.message : String(error)
}
