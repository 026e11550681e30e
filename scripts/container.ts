// What `npm run image` and `npm run image:check` share: the podman command line and a way to
// run it. PODMAN is the one place for the flags this machine's sandbox needs (runc and
// cgroupfs instead of the defaults it cannot use, and ulimits below the defaults it refuses);
// CONTAINER_FLAGS='' drops them on a machine that needs none, or replaces them.
import { spawnSync } from 'node:child_process'

export const IMAGE = 'localhost/tenant-auth'
export const BASE_IMAGE = 'localhost/tenant-auth-base:bookworm'

const SANDBOX_FLAGS =
  '--runtime runc --cgroup-manager=cgroupfs | --ulimit nofile=20000:20000 --ulimit nproc=4096:4096'

/**
 * The flags: `global` go before podman's subcommand, `ulimits` after `build` or `run`
 * (written `global | ulimits` in CONTAINER_FLAGS).
 */
export const PODMAN = parseFlags(process.env.CONTAINER_FLAGS ?? SANDBOX_FLAGS)

function parseFlags(text: string): { global: string[]; ulimits: string[] } {
  const [global = '', ulimits = ''] = text.split('|')
  const words = (part: string) => part.split(/\s+/).filter(Boolean)
  return { global: words(global), ulimits: words(ulimits) }
}

/** podman with the sandbox's flags: `podman(['run', …])` puts the ulimits after `run`. */
export function podmanArgs(subcommand: 'build' | 'run' | string, rest: string[]): string[] {
  const limits = subcommand === 'build' || subcommand === 'run' ? PODMAN.ulimits : []
  return [...PODMAN.global, subcommand, ...limits, ...rest]
}

/** Runs a command, output shown; throws with its name when it fails. */
export function run(command: string, args: string[], options: { cwd?: string } = {}): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')}: exit ${result.status ?? result.signal}`)
  }
}

/** Runs a command and answers its standard output (trimmed); throws when it fails. */
export function capture(command: string, args: string[]): string {
  const result = spawnSync(command, args, { encoding: 'utf8' })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')}: ${result.stderr.trim() || result.status}`)
  }
  return result.stdout.trim()
}

/** podman, answering whether it succeeded (for probes such as `image exists`). */
export function podmanOk(subcommand: string, rest: string[]): boolean {
  return spawnSync('podman', podmanArgs(subcommand, rest), { stdio: 'ignore' }).status === 0
}
