// The checks the connections' admin APIs share (SSO, CONTRACT §12; social, §19): a refusal
// names its field as 400 `validation` does, and a provider's URL is absolute https without
// credentials or a fragment (http too when WEBHOOK_ALLOW_PRIVATE=true, the egress rule's
// switch, for development and tests).
import type { Deps } from '../../deps.ts'
import { fail } from '../../lib/errors.ts'

/** 400 validation naming `body.{path}`. */
export function invalid(path: string, message: string): never {
  fail('validation', { details: { issues: [{ path: `body.${path}`, message }] } })
}

/** A provider's URL, as above; `query: false` refuses a query too (an issuer's). */
export function checkUrl(deps: Pick<Deps, 'config'>, path: string, value: string, query = true) {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    invalid(path, 'not an absolute URL')
  }
  const allowed = deps.config.webhookAllowPrivate ? ['https:', 'http:'] : ['https:']
  if (!allowed.includes(url.protocol)) invalid(path, 'must be https')
  if (url.username || url.password) invalid(path, 'must not carry credentials')
  if (value.includes('#')) invalid(path, 'must not have a fragment')
  if (!query && url.search) invalid(path, 'must not have a query')
}
