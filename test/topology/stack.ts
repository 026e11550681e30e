// The parts of a deployment at scale, each started from its file in deploy/ as it is:
// PgBouncer (pgbouncer.ini, userlist.txt), Redis Sentinel (sentinel.conf) and HAProxy
// (haproxy.cfg). The files' `${NAME}`s are filled from the variables given here (HAProxy
// expands its own from the environment). Everything runs on 127.0.0.1, on free ports, in a
// temporary directory, and is killed however the process ends (procs.ts's onExit).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, onExit } from '../faults/procs.ts'

const DEPLOY = new URL('../../deploy/', import.meta.url).pathname
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const asRoot = process.getuid?.() === 0

/** deploy/<file> with every `${NAME}` replaced; a name without a value is an error. */
export function renderTemplate(file: string, vars: Record<string, string | number>): string {
  return readFileSync(join(DEPLOY, file), 'utf8').replace(/\$\{([A-Z0-9_]+)\}/g, (_, name) => {
    if (!(name in vars)) throw new Error(`deploy/${file}: no value for \${${name}}`)
    return String(vars[name])
  })
}

/** A child process killed at exit, with the last 20 kB it wrote kept for failure messages. */
class Child {
  readonly child: ChildProcess
  readonly exited: Promise<void>
  private log = ''
  private readonly forget: () => void

  /**
   * `quiet`: the output is not kept (the process logs to a file). A pipe nobody reads
   * blocks its writer once full: the test runner's parent waits in spawnSync and reads
   * nothing, so a PgBouncer there must not write to one.
   */
  constructor(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, quiet = false) {
    const stdio = quiet ? 'ignore' : 'pipe'
    this.child = spawn(cmd, args, { stdio: ['ignore', stdio, stdio], env })
    this.forget = onExit(() => this.child.kill('SIGKILL'))
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()))
    const keep = (d: Buffer) => {
      this.log = (this.log + d.toString()).slice(-20_000)
    }
    this.child.stdout?.on('data', keep)
    this.child.stderr?.on('data', keep)
  }

  output(): string {
    return this.log
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.running) this.child.kill(signal)
    await this.exited
    this.forget()
  }
}

/** Resolves once something accepts TCP connections on `port`. */
export async function waitForPort(port: number, what: string, child?: Child, timeoutMs = 15_000) {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (child && !child.running) throw new Error(`${what} exited:\n${child.output()}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' })
      socket.once('connect', () => {
        socket.destroy()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await sleep(50)
  }
  throw new Error(`${what} did not listen on ${port}:\n${child?.output() ?? ''}`)
}

function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  onExit(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** PgBouncer refuses to run as root: under root (CI) it runs as postgres, owning its dir. */
function giveToPostgres(dir: string, files: string[]): void {
  if (!asRoot) return
  const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString())
  const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString())
  for (const path of [dir, ...files]) chownSync(path, uid, gid)
}

/** PgBouncer in transaction mode (deploy/pgbouncer.ini) in front of `pgHost:pgPort`. */
export class PgBouncer {
  readonly port: number
  readonly user: string
  readonly password: string
  private readonly proc: Child
  private readonly dir: string

  private constructor(port: number, user: string, password: string, proc: Child, dir: string) {
    this.port = port
    this.user = user
    this.password = password
    this.proc = proc
    this.dir = dir
  }

  static async start(options: { pgHost: string; pgPort: number; user: string }) {
    const dir = scratchDir('topology-pgbouncer-')
    const port = await freePort()
    const password = `pw-${Math.random().toString(36).slice(2)}`
    const vars = {
      PG_HOST: options.pgHost,
      PG_PORT: options.pgPort,
      PGBOUNCER_HOST: '127.0.0.1',
      PGBOUNCER_PORT: port,
      PGBOUNCER_DIR: dir,
      PGBOUNCER_USER: options.user,
      PGBOUNCER_PASSWORD: password,
    }
    const ini = join(dir, 'pgbouncer.ini')
    const userlist = join(dir, 'userlist.txt')
    writeFileSync(ini, renderTemplate('pgbouncer.ini', vars))
    writeFileSync(userlist, renderTemplate('userlist.txt', vars))
    giveToPostgres(dir, [ini, userlist])
    const args = asRoot ? ['-u', 'postgres', ini] : [ini]
    const proc = new Child('/usr/sbin/pgbouncer', args, process.env, true)
    await waitForPort(port, 'pgbouncer', proc)
    return new PgBouncer(port, options.user, password, proc, dir)
  }

  /** A postgres:// URL for `database` through this PgBouncer. */
  url(database: string): string {
    return `postgres://${this.user}:${this.password}@127.0.0.1:${this.port}/${database}`
  }

  output(): string {
    let log = ''
    try {
      log = readFileSync(join(this.dir, 'pgbouncer.log'), 'utf8').slice(-5000)
    } catch {}
    return this.proc.output() + log
  }

  stop(): Promise<void> {
    return this.proc.kill('SIGKILL')
  }
}

/** One Redis Sentinel (deploy/sentinel.conf) watching the master named `auth`. */
export class Sentinel {
  static readonly MASTER = 'auth'
  readonly port: number
  private readonly proc: Child

  private constructor(port: number, proc: Child) {
    this.port = port
    this.proc = proc
  }

  static async start(options: {
    masterPort: number
    quorum: number
    downAfterMs: number
    failoverTimeoutMs: number
  }) {
    const dir = scratchDir('topology-sentinel-')
    const port = await freePort()
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(
      conf,
      renderTemplate('sentinel.conf', {
        SENTINEL_PORT: port,
        SENTINEL_HOST: '127.0.0.1',
        SENTINEL_DIR: dir,
        REDIS_MASTER_HOST: '127.0.0.1',
        REDIS_MASTER_PORT: options.masterPort,
        SENTINEL_QUORUM: options.quorum,
        SENTINEL_DOWN_AFTER_MS: options.downAfterMs,
        SENTINEL_FAILOVER_TIMEOUT_MS: options.failoverTimeoutMs,
      }),
    )
    const proc = new Child('redis-sentinel', [conf])
    await waitForPort(port, 'redis-sentinel', proc)
    return new Sentinel(port, proc)
  }

  get address(): string {
    return `127.0.0.1:${this.port}`
  }

  output(): string {
    return this.proc.output()
  }

  stop(): Promise<void> {
    return this.proc.kill('SIGKILL')
  }
}

/** HAProxy (deploy/haproxy.cfg) in front of three instances; it reads its ${NAME}s itself. */
export class HaProxy {
  readonly port: number
  private readonly proc: Child

  private constructor(port: number, proc: Child) {
    this.port = port
    this.proc = proc
  }

  static async start(instancePorts: [number, number, number]) {
    const port = await freePort()
    const env = {
      ...process.env,
      HAPROXY_BIND: `127.0.0.1:${port}`,
      APP1_ADDR: `127.0.0.1:${instancePorts[0]}`,
      APP2_ADDR: `127.0.0.1:${instancePorts[1]}`,
      APP3_ADDR: `127.0.0.1:${instancePorts[2]}`,
    }
    const cfg = join(DEPLOY, 'haproxy.cfg')
    const check = spawnSync('/usr/sbin/haproxy', ['-c', '-q', '-f', cfg], { env })
    if (check.status !== 0) throw new Error(`haproxy -c: ${check.stderr}${check.stdout}`)
    const proc = new Child('/usr/sbin/haproxy', ['-db', '-f', cfg], env)
    await waitForPort(port, 'haproxy', proc)
    return new HaProxy(port, proc)
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`
  }

  output(): string {
    return this.proc.output()
  }

  stop(): Promise<void> {
    return this.proc.kill('SIGKILL')
  }
}
