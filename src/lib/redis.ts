// The service's Redis connections. Commands fail at once while Redis is away (no offline
// queue), so rate limits fall back to their in-memory insurance instead of waiting.
import type { Redis, RedisOptions } from 'ioredis'

/** How long a start waits for Redis before going on without it. */
const CONNECT_WAIT_MS = 2000

export interface RedisLog {
  warn(obj: object, msg: string): void
}

/** Where Redis is: one address (REDIS_URL), or a master found through Sentinel. */
export type RedisTarget =
  | { url: string }
  | { sentinels: { host: string; port: number }[]; master: string }

const COMMON: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1 }

/**
 * Through Sentinel (CONTRACT §15), the master is asked of the sentinels at each connection,
 * and the connection is dropped, to be made again to the new master, as soon as one of them
 * announces a failover (`+switch-master`, ioredis's failover detector) or the old master,
 * now a replica, refuses a write (READONLY). A killed master is found out by the broken
 * connection itself; the sentinels then name its successor once they have promoted one.
 * Reconnection is tried every 100-500 ms, so the instance follows within a second of the
 * promotion. `duplicate()` (the revocation subscriber) keeps all of this.
 */
function redisOptions(target: RedisTarget): RedisOptions {
  if ('url' in target) return COMMON
  return {
    ...COMMON,
    sentinels: target.sentinels,
    name: target.master,
    failoverDetector: true,
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
    retryStrategy: (times) => Math.min(100 * times, 500),
    sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
    sentinelCommandTimeout: 1000,
    connectTimeout: 2000,
  }
}

/** Connects, and waits (a bounded time) for the connection, so the first requests count in Redis. */
export async function connectRedis(target: RedisTarget, log: RedisLog): Promise<Redis> {
  // Loaded only when Redis is configured: ioredis is 8 MB of resident memory (issue 10).
  const { Redis } = await import('ioredis')
  const options = redisOptions(target)
  const redis = 'url' in target ? new Redis(target.url, options) : new Redis(options)
  redis.on('error', (error) => log.warn({ err: error.message }, 'redis error'))
  await whenReady(redis)
  return redis
}

/**
 * Resolves once `client` is connected and `onReady` (run again on every reconnection) has
 * finished, or after CONNECT_WAIT_MS if Redis does not answer by then.
 */
export async function whenReady(client: Redis, onReady?: () => Promise<unknown>) {
  const first = new Promise<void>((resolve) => {
    client.on('ready', () => {
      Promise.resolve(onReady?.()).then(
        () => resolve(),
        () => {},
      )
    })
  })
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, CONNECT_WAIT_MS)
  })
  await Promise.race([first, waited])
  clearTimeout(timer)
}
