// Rate-limit budgets (CONTRACT §6). Each is POINTS per SECONDS; all are configurable
// through RATE_LIMIT_<NAME> variables (see README, Configuration).

export interface Budget {
  points: number
  seconds: number
}

export interface Limits {
  /** Failed password logins per (tenant, email, IP). */
  loginFailures: Budget
  /**
   * Failed first-factor sign-ins (password, login code, invite token) per client address,
   * across every email and tenant (CONTRACT §8: password spraying).
   */
  loginFailuresPerIp: Budget
  /**
   * Consecutive failures per account across IPs and factors (remembered for a day unless a
   * success resets them); once spent, the account is held for `seconds`.
   */
  accountFailures: Budget
  /** Login-code and email-OTP requests per (tenant, email). */
  codeRequestsPerEmail: Budget
  /** Login-code and email-OTP requests per IP. */
  codeRequestsPerIp: Budget
  tenantCreation: Budget
  signup: Budget
  /** Refresh, code verification, invite acceptance and OAuth callback, per IP. */
  tokenEndpoints: Budget
  /** Requests to administration routes per (tenant, admin user or API key). */
  adminRequests: Budget
  /** Personal-data exports per (tenant, user): each reads everything the user has. */
  dataExports: Budget
  /** Wrong METRICS_TOKEN guesses per client address (CONTRACT §16). */
  metricsFailures: Budget
  /** OpenID provider token-endpoint requests per (tenant, client) (CONTRACT §11). */
  oidcToken: Budget
  /**
   * OpenID provider token requests of an authenticated client whose grant was refused
   * (a junk refresh token or code under a public client's id), per client address.
   */
  oidcInvalidGrants: Budget
  /**
   * User codes entered at a provider's device page that find no pending device
   * authorization, per client address (RFC 8628 §5.1).
   */
  deviceUserCodes: Budget
  /**
   * The same codes per tenant, across every address (RFC 8628 §5.1): a guess can only land
   * on a pending device authorization of the tenant whose page it is typed on, so this
   * bounds the guesses any one device code can meet in its lifetime, however many
   * addresses guess.
   */
  deviceUserCodesPerTenant: Budget
  /** Polls of one pending device code at the token endpoint; past it `slow_down` (RFC 8628 §3.5). */
  deviceCodePolls: Budget
  /** Dynamic client registrations (RFC 7591) per IP, across tenants (CONTRACT §11). */
  clientRegistration: Budget
  /**
   * Hook test calls (POST hooks/{id}/test) per tenant, across its admins and API keys
   * (CONTRACT §21): each is an outbound request to a URL the admin chose, answered at once.
   */
  hookTestCalls: Budget
}

export const DEFAULT_LIMITS: Limits = {
  loginFailures: { points: 10, seconds: 15 * 60 },
  loginFailuresPerIp: { points: 100, seconds: 60 * 60 },
  accountFailures: { points: 100, seconds: 60 * 60 },
  codeRequestsPerEmail: { points: 3, seconds: 15 * 60 },
  codeRequestsPerIp: { points: 10, seconds: 60 },
  tenantCreation: { points: 5, seconds: 60 * 60 },
  signup: { points: 20, seconds: 60 * 60 },
  tokenEndpoints: { points: 60, seconds: 60 },
  adminRequests: { points: 600, seconds: 60 },
  dataExports: { points: 5, seconds: 60 * 60 },
  metricsFailures: { points: 20, seconds: 5 * 60 },
  oidcToken: { points: 600, seconds: 60 },
  oidcInvalidGrants: { points: 60, seconds: 60 },
  deviceUserCodes: { points: 20, seconds: 10 * 60 },
  deviceUserCodesPerTenant: { points: 1000, seconds: 10 * 60 },
  deviceCodePolls: { points: 1, seconds: 5 },
  clientRegistration: { points: 10, seconds: 60 * 60 },
  hookTestCalls: { points: 10, seconds: 60 },
}

export function parseLimit(raw: string): Budget | undefined {
  const match = /^(\d+)\/(\d+)$/.exec(raw.trim())
  if (!match) return undefined
  const points = Number(match[1])
  const seconds = Number(match[2])
  if (points < 1 || seconds < 1) return undefined
  return { points, seconds }
}
