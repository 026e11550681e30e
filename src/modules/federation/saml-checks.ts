// The refusals of SAML validation (saml.ts) and its clock rules (CONTRACT §12).

/** At most 3 minutes of clock skew, each way (CONTRACT §12). */
export const SAML_CLOCK_SKEW_MS = 3 * 60 * 1000

/** Every reason a SAML response is refused; audited as `UserLoginFailed` `metadata.reason`. */
export const SAML_REFUSALS = [
  'saml_malformed',
  'saml_idp_status',
  'saml_no_assertion',
  'saml_encrypted_assertion',
  'saml_unsigned',
  'saml_weak_algorithm',
  'saml_signature_invalid',
  'saml_wrapped',
  'saml_issuer',
  'saml_destination',
  'saml_recipient',
  'saml_unsolicited',
  'saml_in_response_to',
  'saml_audience',
  'saml_not_yet_valid',
  'saml_expired',
  'saml_no_subject',
  'saml_no_email',
] as const

export type SamlRefusal = (typeof SAML_REFUSALS)[number]

export class SamlError extends Error {
  readonly reason: SamlRefusal
  constructor(reason: SamlRefusal, cause?: unknown) {
    super(`SAML response refused: ${reason}`, cause === undefined ? undefined : { cause })
    this.name = 'SamlError'
    this.reason = reason
  }
}

export function refuse(reason: SamlRefusal, cause?: unknown): never {
  throw new SamlError(reason, cause)
}

/** An xs:dateTime, or a refusal: a time we cannot read is no time we can trust. */
function instant(value: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)
    ? Date.parse(value)
    : Number.NaN
  if (Number.isNaN(ms)) refuse('saml_malformed')
  return ms
}

/**
 * NotBefore and both NotOnOrAfter (Conditions and the bearer SubjectConfirmationData) at
 * `now`, each with SAML_CLOCK_SKEW_MS of slack; both NotOnOrAfter are required. Answers the
 * earlier NotOnOrAfter.
 */
export function samlTimes(now: Date, conditions: Element, confirmation: Element): Date {
  const at = now.getTime()
  let until = Number.POSITIVE_INFINITY
  for (const el of [conditions, confirmation]) {
    const notBefore = el.getAttribute('NotBefore')
    if (notBefore && at + SAML_CLOCK_SKEW_MS < instant(notBefore)) refuse('saml_not_yet_valid')
    const notOnOrAfter = el.getAttribute('NotOnOrAfter')
    if (!notOnOrAfter) refuse('saml_expired')
    const end = instant(notOnOrAfter)
    if (at - SAML_CLOCK_SKEW_MS >= end) refuse('saml_expired')
    until = Math.min(until, end)
  }
  return new Date(until)
}
