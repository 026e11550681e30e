// What counts as "a new device" for the security alert (CONTRACT §9): the pair of the
// browser and OS families (lib/user-agent.ts: coarse, so a browser update is not a new
// device) and the client's network, /24 for IPv4 and /48 for IPv6 (so a new address from
// the same provider's block is not either). A sign-in is from a new device when no session
// of the user seen in the last 90 days had the same pair; never for the user's first one.
import { isIPv4, isIPv6 } from 'node:net'
import { userAgentFamily } from '../../lib/user-agent.ts'

/** How long a device stays known after its session was last used. */
export const DEVICE_MEMORY_DAYS = 90

/** The /24 of an IPv4 address, the /48 of an IPv6 one (IPv4-mapped counts as IPv4). */
export function networkOf(ip: string | null | undefined): string {
  if (!ip) return 'unknown'
  const address = ip.split('%')[0].toLowerCase()
  if (isIPv4(address)) return `${address.split('.').slice(0, 3).join('.')}.0/24`
  if (!isIPv6(address)) return 'unknown'
  const groups = expandIPv6(address)
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const v4 = [groups[6] >> 8, groups[6] & 255, groups[7] >> 8]
    return `${v4.join('.')}.0/24`
  }
  return `${groups
    .slice(0, 3)
    .map((g) => g.toString(16))
    .join(':')}::/48`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` and a trailing IPv4 expanded). */
function expandIPv6(address: string): number[] {
  let text = address
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (v4) {
    const [a, b, c, d] = v4[1].split('.').map(Number)
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::')
  const parse = (part: string | undefined) =>
    part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const zeros = tail === undefined ? [] : new Array(8 - left.length - right.length).fill(0)
  return [...left, ...zeros, ...right]
}

/** The device key of a sign-in: browser family, OS family, network. */
export function deviceKey(ip: string | null | undefined, userAgent: string | null | undefined) {
  const { browser, os } = userAgentFamily(userAgent)
  return `${browser}|${os}|${networkOf(ip)}`
}

/** One (ip, user agent) pair of the user's earlier sessions; `recent` when seen in 90 days. */
export interface PriorDevice {
  ip: string | null
  userAgent: string | null
  recent: boolean
}

/**
 * Whether a sign-in from (ip, userAgent) is from a new device: the user had a session
 * before (so this is not the first) and none of those seen in 90 days had its key.
 */
export function isNewDevice(
  prior: PriorDevice[],
  ip: string | null | undefined,
  userAgent: string | null | undefined,
): boolean {
  if (prior.length === 0) return false
  const key = deviceKey(ip, userAgent)
  return !prior.some((p) => p.recent && deviceKey(p.ip, p.userAgent) === key)
}
