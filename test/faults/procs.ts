// The processes a fault scenario breaks on purpose: a private PostgreSQL cluster, a private
// Redis and the service itself (`node src/server.ts`), each on its own free port of
// 127.0.0.1. The machine's shared PostgreSQL and Redis are never touched. Whatever this file
// starts is stopped by `teardown()` (called from `after()`) and, should the test process end
// another way, by the exit and signal handlers below: no process outlives the run.
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { START_ARGS } from '../start-args.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// Synchronous last resorts, run on any exit of this process (child.kill and spawnSync are
// synchronous, so they work inside an 'exit' handler).
const lastResorts = new Set<() => void>()
function runLastResorts(): void {
  for (const fn of lastResorts) {
    try {
      fn()
    } catch {}
  }
  lastResorts.clear()
}
process.once('exit', runLastResorts)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    runLastResorts()
    process.exit(130)
  })
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

function run(cmd: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${cmd} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`))
      else resolve(stdout + stderr)
    })
  })
}

/** PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (the Debian layout). */
function postgresBin(): string {
  if (process.env.PG_BIN) return process.env.PG_BIN
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error('no PostgreSQL in /usr/lib/postgresql; set PG_BIN')
  return `/usr/lib/postgresql/${versions[0]}/bin`
}

/**
 * A throw-away PostgreSQL cluster in a temporary directory. PostgreSQL refuses to run as
 * root, so under root (CI) every server command runs as `postgres` through runuser.
 */
export class PgCluster {
  readonly dir: string
  readonly port: number
  private readonly bin = postgresBin()

  private constructor(dir: string, port: number) {
    this.dir = dir
    this.port = port
  }

  static async create(): Promise<PgCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'faults-pg-'))
    const cluster = new PgCluster(dir, await freePort())
    lastResorts.add(cluster.destroySync)
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString())
      const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString())
      chownSync(dir, uid, gid)
    }
    await cluster.pg('initdb', ['-D', dir, '-A', 'trust', '-U', 'postgres', '--no-sync'])
    await cluster.start()
    return cluster
  }

  /**
   * A hot-standby streaming replica of this cluster (pg_basebackup -R, WAL streamed), on a
   * port of its own and started.
   */
  async replica(): Promise<PgCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'faults-pg-replica-'))
    const standby = new PgCluster(dir, await freePort())
    lastResorts.add(standby.destroySync)
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString())
      const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString())
      chownSync(dir, uid, gid)
    }
    await standby.pg('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres'],
      ...['-D', dir, '-R', '-X', 'stream', '--no-sync'],
    ])
    await standby.start()
    return standby
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`
    const log = join(this.dir, 'server.log')
    await this.pg('pg_ctl', ['-D', this.dir, '-o', options, '-l', log, '-w', '-t', '60', 'start'])
  }

  /** `fast` disconnects clients cleanly; `immediate` is a crash (recovery at next start). */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.dir, '-m', mode, '-w', '-t', '60', 'stop'])
  }

  /**
   * SIGSTOP to the postmaster and every backend: the port still accepts TCP connections and
   * open connections stay up, but nothing answers, as behind a network partition.
   */
  freeze(): void {
    this.signal('SIGSTOP')
  }

  thaw(): void {
    this.signal('SIGCONT')
  }

  private signal(signal: NodeJS.Signals): void {
    for (const pid of this.pids()) {
      try {
        process.kill(pid, signal)
      } catch {} // gone meanwhile
    }
  }

  /** The postmaster (first line of postmaster.pid) and its children, from /proc. */
  private pids(): number[] {
    let postmaster: number
    try {
      postmaster = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0])
    } catch {
      return []
    }
    const children = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster
        } catch {
          return false
        }
      })
      .map(Number)
    return [postmaster, ...children]
  }

  async destroy(): Promise<void> {
    this.thaw()
    await this.stop('immediate').catch(() => {})
    rmSync(this.dir, { recursive: true, force: true })
    lastResorts.delete(this.destroySync)
  }

  readonly destroySync = (): void => {
    this.thaw()
    const [cmd, args] = this.command('pg_ctl', ['-D', this.dir, '-m', 'immediate', 'stop'])
    spawnSync(cmd, args, { stdio: 'ignore', timeout: 20_000 })
    rmSync(this.dir, { recursive: true, force: true })
  }

  private command(tool: string, args: string[]): [string, string[]] {
    const path = join(this.bin, tool)
    return process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', path, ...args]]
      : [path, args]
  }

  private pg(tool: string, args: string[]): Promise<string> {
    const [cmd, full] = this.command(tool, args)
    return run(cmd, full)
  }
}

/** A private redis-server child: killed and started again on the same port at will. */
export class RedisServer {
  readonly port: number
  private child: ChildProcess | undefined
  private exited: Promise<void> = Promise.resolve()

  private constructor(port: number) {
    this.port = port
  }

  static async create(): Promise<RedisServer> {
    const redis = new RedisServer(await freePort())
    lastResorts.add(() => redis.child?.kill('SIGKILL'))
    await redis.start()
    return redis
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '']
    args.push('--appendonly', 'no', '--daemonize', 'no', '--dir', tmpdir())
    const child = spawn('redis-server', args, { stdio: 'ignore' })
    this.child = child
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()))
    const until = Date.now() + 10_000
    while (Date.now() < until) {
      if (await redisAnswers(this.port)) return
      await sleep(50)
    }
    throw new Error(`redis-server did not answer on port ${this.port}`)
  }

  /** SIGKILL: Redis is gone at once, as in a crash; nothing is kept (no persistence). */
  async stop(): Promise<void> {
    this.child?.kill('SIGKILL')
    await this.exited
    this.child = undefined
  }
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (d) => done(d.toString().startsWith('+PONG')))
  })
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** The service as an operator runs it, with environment variables only. */
export class Service {
  readonly base: string
  readonly child: ChildProcess
  readonly exit: Promise<Exit>
  private log = ''

  constructor(port: number, env: Record<string, string>) {
    this.base = `http://127.0.0.1:${port}`
    this.child = spawn(process.execPath, [...START_ARGS], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const kill = () => this.child.kill('SIGKILL')
    lastResorts.add(kill)
    this.exit = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        lastResorts.delete(kill)
        resolve({ code, signal })
      }),
    )
    const keep = (d: Buffer) => {
      this.log = (this.log + d.toString()).slice(-20_000)
    }
    this.child.stdout?.on('data', keep)
    this.child.stderr?.on('data', keep)
  }

  /** The last 20 kB the process wrote, for failure messages. */
  output(): string {
    return this.log
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Polls /ready until it answers 200; the process dying first is an error at once. */
  async waitReady(timeoutMs = 90_000): Promise<number> {
    const started = performance.now()
    const until = Date.now() + timeoutMs
    while (Date.now() < until) {
      if (!this.running) throw new Error(`service exited during start:\n${this.output()}`)
      try {
        const res = await fetch(`${this.base}/ready`, { signal: AbortSignal.timeout(2000) })
        await res.arrayBuffer()
        if (res.status === 200) return performance.now() - started
      } catch {}
      await sleep(100)
    }
    throw new Error(`service not ready after ${timeoutMs} ms:\n${this.output()}`)
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (this.running) this.child.kill(signal)
    return this.exit
  }
}

/** Secrets every instance of one scenario shares, so tokens cross instances and restarts. */
function sharedSecrets(): Record<string, string> {
  return {
    JWT_SECRET: randomBytes(48).toString('base64url'),
    ENCRYPTION_KEYS: `v1:${randomBytes(32).toString('base64')}`,
  }
}

// Every budget of CONTRACT §6 and §8, large enough that the load itself is never throttled;
// a scenario that probes a limit sets that one small.
const GENEROUS = {
  RATE_LIMIT_LOGIN_FAILURES: '100000/900',
  RATE_LIMIT_ACCOUNT_FAILURES: '100000/3600',
  RATE_LIMIT_CODE_REQUESTS_PER_EMAIL: '100000/900',
  RATE_LIMIT_CODE_REQUESTS_PER_IP: '100000/60',
  RATE_LIMIT_TENANT_CREATION: '100000/3600',
  RATE_LIMIT_SIGNUP: '100000/3600',
  RATE_LIMIT_TOKEN_ENDPOINTS: '100000/60',
  RATE_LIMIT_ADMIN_REQUESTS: '100000/60',
  RATE_LIMIT_LOGIN_FAILURES_PER_IP: '100000/3600',
}

/**
 * One scenario's world: a private PostgreSQL and Redis, the shared secrets, and the
 * service instances started on them. `teardown()` ends all of it.
 */
export class FaultWorld {
  readonly pg: PgCluster
  readonly redis: RedisServer
  private readonly scratch = mkdtempSync(join(tmpdir(), 'faults-'))
  private readonly secrets = sharedSecrets()
  private readonly services = new Set<Service>()

  private constructor(pg: PgCluster, redis: RedisServer) {
    this.pg = pg
    this.redis = redis
    lastResorts.add(() => rmSync(this.scratch, { recursive: true, force: true }))
  }

  static async create(): Promise<FaultWorld> {
    const [pg, redis] = await Promise.all([PgCluster.create(), RedisServer.create()])
    return new FaultWorld(pg, redis)
  }

  /** Starts an instance (on `port`, else a free one) and waits until it is ready. */
  async startService(options: { port?: number; env?: Record<string, string> } = {}) {
    const port = options.port ?? (await freePort())
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      NODE_COMPILE_CACHE: join('node_modules', '.cache', 'node-compile-cache'),
      DATABASE_URL: this.pg.url,
      REDIS_URL: this.redis.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      // One public address for every instance (they sit behind one name): the JWT `iss`.
      PUBLIC_URL: 'http://auth.faults.test',
      LOG_LEVEL: 'warn',
      DATA_DIR: join(this.scratch, `data-${port}`),
      TRUST_PROXY: 'true',
      ...this.secrets,
      ...GENEROUS,
      ...options.env,
    }
    const service = new Service(port, env)
    this.services.add(service)
    const readyMs = await service.waitReady()
    return { service, port, readyMs }
  }

  async teardown(): Promise<void> {
    await Promise.all([...this.services].map((s) => s.kill('SIGKILL')))
    await this.redis.stop().catch(() => {})
    await this.pg.destroy()
    rmSync(this.scratch, { recursive: true, force: true })
  }
}
