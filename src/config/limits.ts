// The rate-limit budgets as variables (CONTRACT §6): RATE_LIMIT_<NAME>=POINTS/SECONDS for
// each budget of lib/limits.ts, whose defaults they show. A new budget needs its description
// here (the Record below does not compile without it).
import { DEFAULT_LIMITS, type Limits, parseLimit } from '../lib/limits.ts'
import { parsed } from './variables.ts'

/** What each budget counts (CONTRACT §6, §8, §11, §16), for the reference page. */
const LIMIT_DESCRIPTIONS: Record<keyof Limits, string> = {
  loginFailures:
    'Failed password logins per (tenant, email, IP); then 429 until the window passes, even with the right password',
  loginFailuresPerIp:
    'Failed first-factor sign-ins (password, login, reset or verification code, invite token) per client address, across every email and tenant (password spraying)',
  accountFailures:
    'Consecutive failures per account across all IPs and factors (remembered for a day unless a success resets them); then 429 for `SECONDS`',
  codeRequestsPerEmail:
    'Login-code, email-OTP, password-reset and verification requests per (tenant, email), each kind in its own bucket',
  codeRequestsPerIp:
    'Login-code requests per IP, and, in buckets of the same size of their own, email-OTP, password-reset and verification requests per IP',
  tenantCreation: 'Tenant creations per IP',
  signup: 'Signups per IP',
  tokenEndpoints:
    'Refresh, code verification, invite acceptance, OAuth callback and passkey verification, per IP',
  adminRequests: 'Requests to administration routes per (tenant, admin user or API key)',
  dataExports: 'Personal-data exports (`POST me/export`) per (tenant, user)',
  metricsFailures: 'Wrong `METRICS_TOKEN` guesses at `GET /metrics` per client address',
  oidcToken:
    "Requests to an OpenID provider's token endpoint per (tenant, client id), once the client is authenticated",
  oidcInvalidGrants:
    "Requests to an OpenID provider's token endpoint whose client is authenticated (a public client by its id alone) but whose grant is refused (`invalid_grant`, `invalid_request`, …), per client address; they never spend the client's budget",
  deviceUserCodes:
    "User codes entered at an OpenID provider's device page (`{issuer}/device`) that find no pending device authorization (wrong, expired or used), per client address across tenants (RFC 8628 §5.1); then every code from that address, a right one too, gets a 429 page",
  deviceUserCodesPerTenant:
    "The same user codes per tenant, across every client address: a guess can only find a device authorization of the tenant whose page it is typed on, so this bounds the guesses any one pending device code meets in its life, however many addresses guess (RFC 8628 §5.1); then every code at that tenant's device page gets a 429 page",
  deviceCodePolls:
    'Polls of one pending device code at the token endpoint; a poll past it is answered `slow_down` (RFC 8628 §3.5), and the device authorization response announces `interval` = ⌈`SECONDS`/`POINTS`⌉',
  clientRegistration: 'Dynamic client registrations (RFC 7591) per IP across tenants',
  hookTestCalls:
    'Hook test calls (`POST hooks/{id}/test`) per tenant, across its admins and API keys: each is an outbound request to a URL an admin chose; past it 429 and nothing is sent',
}

const LIMIT_CONTRACT: Partial<Record<keyof Limits, string>> = {
  loginFailuresPerIp: '§8',
  metricsFailures: '§16',
  oidcToken: '§11',
  oidcInvalidGrants: '§11',
  deviceUserCodes: '§11',
  deviceUserCodesPerTenant: '§11',
  deviceCodePolls: '§11',
  clientRegistration: '§11',
  hookTestCalls: '§21',
}

/** RATE_LIMIT_LOGIN_FAILURES for loginFailures. */
export function limitVariable(name: keyof Limits): `RATE_LIMIT_${string}` {
  return `RATE_LIMIT_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`
}

function budgetVariable(name: keyof Limits) {
  const { points, seconds } = DEFAULT_LIMITS[name]
  const budget = (raw: string) =>
    parseLimit(raw) ?? { problem: 'expected POINTS/SECONDS, for example 10/900' }
  return parsed(budget, {
    group: 'Rate limits',
    contract: LIMIT_CONTRACT[name] ?? '§6',
    kind: '`POINTS/SECONDS`',
    default: `${points}/${seconds}`,
    description: LIMIT_DESCRIPTIONS[name],
  })
}

export const limits = Object.fromEntries(
  (Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]).map((name) => [
    limitVariable(name),
    budgetVariable(name),
  ]),
) as Record<`RATE_LIMIT_${string}`, ReturnType<typeof budgetVariable>>
