// The parsers of the variables whose value is more than a pattern (schema.ts): each answers
// the value the service uses, or the problem that becomes the error line after `NAME: `.
import { splitList } from './variables.ts'

export interface EncryptionKey {
  version: string
  key: Buffer
}

export interface RedisSentinel {
  host: string
  port: number
}

type Parsed<T> = T | { problem: string }

/** ENCRYPTION_KEYS (CONTRACT §1): `v2:<base64 of 32 bytes>,v1:<…>`, the first encrypts. */
export function parseEncryptionKeys(raw: string): Parsed<EncryptionKey[]> {
  const keys: EncryptionKey[] = []
  for (const entry of splitList(raw)) {
    const match = /^(v\d+):([A-Za-z0-9+/]+={0,2})$/.exec(entry)
    const key = match ? Buffer.from(match[2], 'base64') : undefined
    if (!match || !key || key.length !== 32) {
      return { problem: 'expected v<N>:<base64 of 32 bytes>, comma separated' }
    }
    if (keys.some((k) => k.version === match[1])) {
      return { problem: `version ${match[1]} appears twice` }
    }
    keys.push({ version: match[1], key })
  }
  if (keys.length === 0) return { problem: 'at least one key is required' }
  return keys
}

/** HS256 keys are their UTF-8 bytes: fewer than 32 is guessable (RFC 7518 §3.2). */
export function hmacSecret(raw: string): Parsed<string> {
  return Buffer.byteLength(raw, 'utf8') >= 32 ? raw : { problem: 'must be at least 32 bytes' }
}

export function hmacSecrets(raw: string): Parsed<string[]> {
  const secrets = splitList(raw)
  if (secrets.some((s) => Buffer.byteLength(s, 'utf8') < 32)) {
    return { problem: 'every key must be at least 32 bytes' }
  }
  return secrets
}

/** WEBHOOK_RETRY_SCHEDULE (CONTRACT §13): whole seconds before each retry. */
export function parseRetrySchedule(raw: string): Parsed<number[]> {
  if (raw.trim() === '') return DEFAULT_WEBHOOK_RETRY_SCHEDULE
  const parts = raw.split(',').map((p) => p.trim())
  if (parts.some((p) => !/^\d{1,6}$/.test(p))) {
    return { problem: 'comma-separated whole seconds, e.g. 5,300,1800' }
  }
  return parts.map(Number)
}

/** CONTRACT §13: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [
  5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400,
]

/** REDIS_SENTINELS (CONTRACT §15): `host:port` entries, comma separated (IPv6 in brackets). */
export function parseSentinels(raw: string): Parsed<RedisSentinel[]> {
  const sentinels: RedisSentinel[] = []
  for (const entry of splitList(raw)) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(entry)
    const port = Number(match?.[2])
    if (!match || port < 1 || port > 65535) {
      return { problem: 'expected host:port, comma separated' }
    }
    sentinels.push({ host: match[1].replace(/^\[|\]$/g, ''), port })
  }
  return sentinels
}

/**
 * TRUST_PROXY (CONTRACT §1, §8). false: the socket address is the client. true or a number:
 * that many proxies in front append to X-Forwarded-For, and the client is the entry they saw
 * (never the left-most, which the client writes). A string: the trusted proxies' addresses.
 */
export function parseTrustProxy(raw: string): Parsed<boolean | number | string> {
  if (raw === 'false' || raw === '0') return false
  if (raw === 'true') return true
  if (/^[1-9]\d?$/.test(raw)) return Number(raw)
  const entries = raw.split(',').map((s) => s.trim())
  if (entries.every((e) => /^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(e))) return entries.join(',')
  return {
    problem: 'must be true, false, a number of proxies, or a list of proxy addresses',
  }
}

/**
 * SOCIAL_PROVIDER_ENDPOINTS (CONTRACT §19): per preset, the public endpoints to use instead
 * of the provider's own, e.g. `{"google": {"issuer": "http://127.0.0.1:4010"}}`. Each value
 * an object of http(s) URLs (Apple's `audience` may be any string).
 */
export type SocialEndpoints = Record<string, Record<string, string>>

const SOCIAL_ENDPOINT_KEYS = ['issuer', 'authorizationUrl', 'tokenUrl', 'userinfoUrl', 'apiUrl']

export function parseSocialEndpoints(raw: string): Parsed<SocialEndpoints> {
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return { problem: 'a JSON object such as {"google": {"issuer": "http://127.0.0.1:4010"}}' }
  }
  if (!isObject(value)) return { problem: 'a JSON object of presets' }
  const out: SocialEndpoints = {}
  for (const [preset, endpoints] of Object.entries(value)) {
    if (!isObject(endpoints)) return { problem: `${preset}: an object of endpoints` }
    out[preset] = {}
    for (const [key, url] of Object.entries(endpoints)) {
      if (typeof url !== 'string') return { problem: `${preset}.${key}: a string` }
      if (SOCIAL_ENDPOINT_KEYS.includes(key) && !/^https?:\/\/[^\s]+$/.test(url)) {
        return { problem: `${preset}.${key}: an http(s) URL` }
      }
      out[preset][key] = url
    }
  }
  return out
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
