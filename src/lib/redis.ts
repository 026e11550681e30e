// The service's Redis connections. Commands fail at once while Redis is away (no offline
// queue), so rate limits fall back to their in-memory insurance instead of waiting.
import type { Redis } from 'ioredis'

/** How long a start waits for Redis before going on without it. */
const CONNECT_WAIT_MS = 2000

export interface RedisLog {
  warn(obj: object, msg: string): void
}

/** Connects, and waits (a bounded time) for the connection, so the first requests count in Redis. */
export async function connectRedis(url: string, log: RedisLog): Promise<Redis> {
  // Loaded only when REDIS_URL is set: ioredis is 8 MB of resident memory (issue 10).
  const { Redis } = await import('ioredis')
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
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
