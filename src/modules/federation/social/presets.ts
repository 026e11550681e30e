// The social providers a tenant can turn on (CONTRACT §19), each a preset of the one
// provider interface: how to start (the endpoints and scopes), how the code is exchanged
// (OpenID Connect, whose ID token openid-client checks, or plain OAuth 2.0) and how the
// profile is read into an identity. Adding a provider is one entry here and its tests.
//
// The endpoints and rules are the providers' own documents:
// - Google: https://developers.google.com/identity/openid-connect/openid-connect (issuer
//   https://accounts.google.com; `email_verified` in the ID token).
// - Microsoft: the identity platform's v2.0 endpoint (microsoft.ts).
// - GitLab: https://docs.gitlab.com/integration/openid_connect_provider/ (issuer
//   https://gitlab.com, or a self-managed instance's URL).
// - Slack: https://api.slack.com/authentication/sign-in-with-slack (issuer https://slack.com).
// - LinkedIn: https://learn.microsoft.com/linkedin/consumer/integrations/self-serve/sign-in-with-linkedin-v2
//   (issuer https://www.linkedin.com/oauth).
// - GitHub: https://docs.github.com/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
//   (OAuth 2.0, not OIDC), the id from `GET /user`, the address from `GET /user/emails`
//   (https://docs.github.com/rest/users/emails): the primary one, and only when verified.
// - Discord: https://discord.com/developers/docs/topics/oauth2 and `GET /users/@me`
//   (https://discord.com/developers/docs/resources/user), whose `verified` covers the email.
// - Apple: https://developer.apple.com/documentation/signinwithapple/request-an-authorization-to-the-sign-in-with-apple-server
//   (issuer https://appleid.apple.com; scopes `name email`; `response_mode=form_post`, the
//   `user` field of the first callback) and
//   https://developer.apple.com/documentation/accountorganizationaldatasharing/creating-a-client-secret
//   (the client secret is a JWT the service signs: apple.ts).
// - Facebook: https://developers.facebook.com/docs/facebook-login/guides/advanced/manual-flow
//   and the Graph API's `/me?fields=id,name,email`. Facebook says nothing of whether the
//   address was verified, so it counts as unverified: it never links an existing account.
import { claimsVerified, displayEmail, isEmail } from '../../../lib/email.ts'

export const SOCIAL_PROVIDERS = [
  'google',
  'microsoft',
  'apple',
  'github',
  'gitlab',
  'discord',
  'slack',
  'linkedin',
  'facebook',
  'oidc',
  'oauth2',
] as const
export type SocialProviderName = (typeof SOCIAL_PROVIDERS)[number]

/** What a provider vouches for, normalised. */
export interface Profile {
  /** The provider's stable id of the person (the identity's subject). */
  subject: string
  /** As the provider wrote it (trimmed), or null when it shared no valid address. */
  email: string | null
  emailVerified: boolean
  name: string | null
  /** The ID token's `amr` (RFC 8176); undefined without an ID token. */
  amr: string[] | undefined
  /** A new account's names, where the provider gave them apart (Apple's `user` field). */
  names?: { givenName: string | null; familyName: string | null }
}

export interface Endpoints {
  authorizationUrl?: string
  tokenUrl?: string
  userinfoUrl?: string
  apiUrl?: string
}

export interface ClaimPaths {
  id?: string
  email?: string
  emailVerified?: string
  name?: string
}

/** GET of a JSON document with the access token (through the egress guard). */
export type ApiGet = (url: string) => Promise<unknown>

interface Common {
  /** The button's default label. */
  label: string
  /** The minimum for an id and a verified email. */
  scopes: string[]
}

export interface OidcPreset extends Common {
  protocol: 'oidc'
  /** The preset's issuer; undefined where the connection names it (`oidc`). */
  issuer?: string
  /**
   * Apple's way: the code comes back in a form POST (OAuth 2.0 Form Post Response Mode) and
   * the client secret is a JWT the service signs with the connection's key (apple.ts).
   */
  apple?: true
}

export interface OAuth2Preset extends Common {
  protocol: 'oauth2'
  /** The preset's endpoints; empty where the connection names them (`oauth2`). */
  endpoints: Endpoints
  /** How the client authenticates at the token endpoint (RFC 6749 §2.3.1). */
  tokenAuth: 'basic' | 'post'
  /** The profile, read from the provider's API with the access token. */
  profile(get: ApiGet, endpoints: Endpoints, claims: ClaimPaths): Promise<Profile>
}

export type Preset = OidcPreset | OAuth2Preset

const OIDC_SCOPES = ['openid', 'email', 'profile']

export const PRESETS: Record<SocialProviderName, Preset> = {
  google: {
    protocol: 'oidc',
    label: 'Google',
    scopes: OIDC_SCOPES,
    issuer: 'https://accounts.google.com',
  },
  // The issuer names the user's directory: microsoft.ts checks it (the connection's
  // `issuer` names a directory id, `common` or `organizations`).
  microsoft: { protocol: 'oidc', label: 'Microsoft', scopes: OIDC_SCOPES },
  gitlab: { protocol: 'oidc', label: 'GitLab', scopes: OIDC_SCOPES, issuer: 'https://gitlab.com' },
  slack: { protocol: 'oidc', label: 'Slack', scopes: OIDC_SCOPES, issuer: 'https://slack.com' },
  linkedin: {
    protocol: 'oidc',
    label: 'LinkedIn',
    scopes: OIDC_SCOPES,
    issuer: 'https://www.linkedin.com/oauth',
  },
  apple: {
    protocol: 'oidc',
    label: 'Apple',
    scopes: ['openid', 'email', 'name'],
    issuer: 'https://appleid.apple.com',
    apple: true,
  },
  oidc: { protocol: 'oidc', label: 'OpenID Connect', scopes: OIDC_SCOPES },
  github: {
    protocol: 'oauth2',
    label: 'GitHub',
    scopes: ['read:user', 'user:email'],
    endpoints: {
      authorizationUrl: 'https://github.com/login/oauth/authorize',
      tokenUrl: 'https://github.com/login/oauth/access_token',
      apiUrl: 'https://api.github.com',
    },
    tokenAuth: 'post',
    async profile(get, endpoints) {
      const api = trimSlash(endpoints.apiUrl)
      const user = record(await get(`${api}/user`))
      const emails = await get(`${api}/user/emails`)
      // The primary address, and only when GitHub verified it; none otherwise (such an
      // account signs in only where it is already linked).
      const primary = (Array.isArray(emails) ? emails : [])
        .map(record)
        .find((e) => e.primary === true && e.verified === true)
      return {
        subject: idOf(user.id),
        ...emailOf(primary?.email, true),
        name: textOf(user.name) ?? textOf(user.login),
        amr: undefined,
      }
    },
  },
  discord: {
    protocol: 'oauth2',
    label: 'Discord',
    scopes: ['identify', 'email'],
    endpoints: {
      authorizationUrl: 'https://discord.com/oauth2/authorize',
      tokenUrl: 'https://discord.com/api/oauth2/token',
      apiUrl: 'https://discord.com/api',
    },
    tokenAuth: 'basic',
    async profile(get, endpoints) {
      const user = record(await get(`${trimSlash(endpoints.apiUrl)}/users/@me`))
      return {
        subject: idOf(user.id),
        ...emailOf(user.email, user.verified === true),
        name: textOf(user.global_name) ?? textOf(user.username),
        amr: undefined,
      }
    },
  },
  facebook: {
    protocol: 'oauth2',
    label: 'Facebook',
    scopes: ['email', 'public_profile'],
    endpoints: {
      authorizationUrl: 'https://www.facebook.com/v19.0/dialog/oauth',
      tokenUrl: 'https://graph.facebook.com/v19.0/oauth/access_token',
      apiUrl: 'https://graph.facebook.com/v19.0',
    },
    tokenAuth: 'post',
    async profile(get, endpoints) {
      const me = record(await get(`${trimSlash(endpoints.apiUrl)}/me?fields=id,name,email`))
      return {
        subject: idOf(me.id),
        ...emailOf(me.email, false),
        name: textOf(me.name),
        amr: undefined,
      }
    },
  },
  oauth2: {
    protocol: 'oauth2',
    label: 'OAuth 2.0',
    scopes: [],
    endpoints: {},
    tokenAuth: 'basic',
    async profile(get, endpoints, claims) {
      const info = await get(endpoints.userinfoUrl as string)
      const at = (path: string | undefined) => (path ? pathOf(info, path) : undefined)
      return {
        subject: idOf(at(claims.id ?? 'id')),
        // Without an `emailVerified` path nothing says the address was verified.
        ...emailOf(at(claims.email ?? 'email'), claimsVerified(at(claims.emailVerified))),
        name: textOf(at(claims.name ?? 'name')),
        amr: undefined,
      }
    },
  },
}

/** An OIDC preset's profile, from the ID token's claims (and userinfo's where read). */
export function oidcProfile(claims: Record<string, unknown>, amr: unknown): Profile {
  return {
    subject: idOf(claims.sub),
    // Some providers send the flag as a string: lib/email.ts says which values count.
    ...emailOf(claims.email, claimsVerified(claims.email_verified)),
    name: textOf(claims.name),
    amr: Array.isArray(amr)
      ? amr.filter((m): m is string => typeof m === 'string' && m !== '')
      : [],
  }
}

/** A value at a dot-separated path (`data.user.id`); undefined where it leads nowhere. */
export function pathOf(value: unknown, path: string): unknown {
  let at: unknown = value
  for (const part of path.split('.')) {
    if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined
    if (!Object.hasOwn(at, part)) return undefined
    at = (at as Record<string, unknown>)[part]
  }
  return at
}

export class ProfileError extends Error {}

/** A provider's id: a non-empty string, or a whole number (GitHub's and Discord's ids). */
function idOf(value: unknown): string {
  if (typeof value === 'string' && value !== '' && value.length <= 255) return value
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value)
  throw new ProfileError('the provider answered no id')
}

function emailOf(value: unknown, verified: boolean) {
  const email = typeof value === 'string' && isEmail(value) ? displayEmail(value) : null
  return { email, emailVerified: email !== null && verified }
}

function textOf(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim().slice(0, 200) : null
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}
}

const trimSlash = (url: string | undefined) => (url ?? '').replace(/\/+$/, '')
