// The deployment of README "Deployment at scale", on one machine: a private PostgreSQL
// (procs.ts), PgBouncer in transaction mode, a Redis master with one replica watched by two
// Sentinels, three service instances started as `npm start` is (with the Environment= lines
// of deploy/systemd/tenant-auth@.service) and HAProxy in front of them. Nothing here touches
// the machine's own PostgreSQL or Redis.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort, onExit, PgCluster, RedisServer, Service } from '../faults/procs.ts'
import { HaProxy, PgBouncer, Sentinel } from './stack.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The unit's `Environment=NAME=value` lines (PORT=%i left out: each instance has its own). */
function unitEnvironment(): Record<string, string> {
  const unit = new URL('../../deploy/systemd/tenant-auth@.service', import.meta.url)
  const env: Record<string, string> = {}
  for (const line of readFileSync(unit, 'utf8').split('\n')) {
    const match = /^Environment=([A-Z_]+)=(.*)$/.exec(line.trim())
    if (match && !match[2].includes('%')) env[match[1]] = match[2]
  }
  return env
}

// Budgets large enough for the load; the one the scenario probes (password failures per
// account and address, CONTRACT §6) is small.
export const LOGIN_FAILURES = 5
const BUDGETS = {
  RATE_LIMIT_LOGIN_FAILURES: `${LOGIN_FAILURES}/900`,
  RATE_LIMIT_ACCOUNT_FAILURES: '100000/3600',
  RATE_LIMIT_CODE_REQUESTS_PER_EMAIL: '100000/900',
  RATE_LIMIT_CODE_REQUESTS_PER_IP: '100000/60',
  RATE_LIMIT_TENANT_CREATION: '100000/3600',
  RATE_LIMIT_SIGNUP: '100000/3600',
  RATE_LIMIT_TOKEN_ENDPOINTS: '100000/60',
  RATE_LIMIT_ADMIN_REQUESTS: '100000/60',
  RATE_LIMIT_LOGIN_FAILURES_PER_IP: '100000/3600',
}

export class Topology {
  pg!: PgCluster
  bouncer!: PgBouncer
  master!: RedisServer
  replica!: RedisServer
  sentinels: Sentinel[] = []
  instances: Service[] = []
  haproxy!: HaProxy
  /** Milliseconds until the three instances, started at once, were all ready. */
  startMs = 0
  private readonly scratch = mkdtempSync(join(tmpdir(), 'topology-'))

  async start(): Promise<void> {
    onExit(() => rmSync(this.scratch, { recursive: true, force: true }))
    this.pg = await PgCluster.create()
    this.bouncer = await PgBouncer.start({
      pgHost: '127.0.0.1',
      pgPort: this.pg.port,
      user: 'postgres',
    })
    this.master = await RedisServer.create()
    this.replica = await RedisServer.create(['--replicaof', '127.0.0.1', String(this.master.port)])
    for (let i = 0; i < 2; i++) {
      this.sentinels.push(
        await Sentinel.start({
          masterPort: this.master.port,
          quorum: 1,
          downAfterMs: 1000,
          failoverTimeoutMs: 2000,
        }),
      )
    }
    await this.waitForSentinels()
    const secrets = {
      JWT_SECRET: randomBytes(48).toString('base64url'),
      ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
    }
    const ports = [await freePort(), await freePort(), await freePort()] as [number, number, number]
    // All three at once on an empty database, through PgBouncer: the migrations' transaction
    // lock lets one migrate while the others wait, then find nothing left to do.
    const started = performance.now()
    this.instances = ports.map(
      (port) =>
        new Service(port, {
          PATH: process.env.PATH ?? '',
          NODE_COMPILE_CACHE: join('node_modules', '.cache', 'node-compile-cache'),
          ...unitEnvironment(),
          PORT: String(port),
          DATABASE_URL: this.bouncer.url('postgres'),
          REDIS_SENTINELS: this.sentinels.map((s) => s.address).join(','),
          REDIS_SENTINEL_MASTER: Sentinel.MASTER,
          PUBLIC_URL: 'http://auth.topology.test',
          LOG_LEVEL: 'warn',
          DATA_DIR: join(this.scratch, `data-${port}`),
          // The load's X-Forwarded-For stands for an outer proxy, HAProxy appends its own.
          TRUST_PROXY: '2',
          // Every instance runs the webhook worker; the receiver is on 127.0.0.1.
          WEBHOOK_WORKER: 'true',
          WEBHOOK_ALLOW_PRIVATE: 'true',
          ...secrets,
          ...BUDGETS,
        }),
    )
    await Promise.all(this.instances.map((s) => s.waitReady()))
    this.startMs = performance.now() - started
    this.haproxy = await HaProxy.start(ports)
    await this.waitForBackends()
  }

  /** The sentinels know the replica (a failover needs one to promote). */
  private async waitForSentinels(): Promise<void> {
    const until = Date.now() + 20_000
    while (Date.now() < until) {
      const counts = await Promise.all(
        this.sentinels.map((s) =>
          this.sentinelCall(s, ['SENTINEL', 'REPLICAS', Sentinel.MASTER]).then(
            (r) => (r as unknown[]).length,
            () => 0,
          ),
        ),
      )
      if (counts.every((n) => n > 0)) return
      await sleep(200)
    }
    throw new Error(`the sentinels never saw the replica:\n${this.sentinels[0].output()}`)
  }

  private async waitForBackends(): Promise<void> {
    for (let i = 0; i < 50; i++) {
      const res = await fetch(`${this.haproxy.base}/ready`).catch(() => undefined)
      if (res?.status === 200) return
      await sleep(100)
    }
    throw new Error(`haproxy never answered /ready:\n${this.haproxy.output()}`)
  }

  /** One command to a sentinel. */
  async sentinelCall(sentinel: Sentinel, command: string[]): Promise<unknown> {
    const client = new Redis({ port: sentinel.port, host: '127.0.0.1', lazyConnect: true })
    client.on('error', () => {})
    try {
      await client.connect()
      return await client.call(command[0], ...command.slice(1))
    } finally {
      client.disconnect()
    }
  }

  /** The master's port as the sentinels name it now. */
  async masterPort(): Promise<number> {
    const [, port] = (await this.sentinelCall(this.sentinels[0], [
      'SENTINEL',
      'GET-MASTER-ADDR-BY-NAME',
      Sentinel.MASTER,
    ])) as [string, string]
    return Number(port)
  }

  /** One command on a Redis server of this topology. */
  async redis(port: number, command: string[]): Promise<unknown> {
    const client = new Redis({
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
    })
    client.on('error', () => {})
    try {
      await client.connect()
      return await client.call(command[0], ...command.slice(1))
    } finally {
      client.disconnect()
    }
  }

  async teardown(): Promise<void> {
    await this.haproxy?.stop()
    await Promise.all(this.instances.map((s) => s.kill('SIGKILL')))
    for (const s of this.sentinels) await s.stop()
    await this.replica?.stop().catch(() => {})
    await this.master?.stop().catch(() => {})
    await this.bouncer?.stop()
    await this.pg?.destroy()
    rmSync(this.scratch, { recursive: true, force: true })
  }
}
