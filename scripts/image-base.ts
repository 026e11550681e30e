// The image's base (CONTRACT §23): Debian bookworm made with debootstrap, since no base image
// can be pulled here. Made once from the Debian mirror this machine's apt uses, brought up to
// date from bookworm-updates and bookworm-security, stripped of what a service never reads
// (documentation, manuals, translations, apt's lists and caches), and kept twice: as the
// image localhost/tenant-auth-base:bookworm, and as a tarball in the cache folder, from which
// the image is imported again when the container storage has lost it. `--refresh-base` makes
// it anew (for the security updates published since).
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { BASE_IMAGE, podmanOk, run } from './container.ts'

export const CACHE_DIR = process.env.IMAGE_CACHE_DIR || '/var/cache/tenant-auth'
const TARBALL = join(CACHE_DIR, 'bookworm-minbase.tar')

/**
 * What a service in the image never reads, removed from the root file system; and the build
 * machine's resolver and name, which debootstrap copied in (a container is given its own).
 */
const STRIPPED = [
  'etc/resolv.conf',
  'etc/hostname',
  'usr/share/doc/*',
  'usr/share/man/*',
  'usr/share/info/*',
  'usr/share/locale/*',
  'usr/share/lintian/*',
  'usr/share/common-licenses/*',
  'var/lib/apt/lists/*',
  'var/cache/apt/*',
  'var/cache/debconf/*-old',
  'var/log/*',
]

/** Makes sure the base image exists, from the cached tarball or from debootstrap. */
export function ensureBase(refresh: boolean): void {
  if (!refresh && podmanOk('image', ['exists', BASE_IMAGE])) return
  if (refresh || !existsSync(TARBALL)) bootstrap()
  run('podman', ['import', TARBALL, BASE_IMAGE])
}

function bootstrap(): void {
  const mirror = debianMirror()
  mkdirSync(CACHE_DIR, { recursive: true })
  const work = mkdtempSync(join(CACHE_DIR, 'rootfs-'))
  const root = join(work, 'rootfs')
  const started = performance.now()
  try {
    run('debootstrap', ['--variant=minbase', 'bookworm', root, mirror.debian])
    updateInside(root, mirror)
    run('sh', ['-c', `cd "${root}" && rm -rf ${STRIPPED.join(' ')}`])
    const partial = `${TARBALL}.partial`
    run('tar', ['--numeric-owner', '-C', root, '-cf', partial, '.'])
    run('mv', [partial, TARBALL])
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
  console.log(`image: base made in ${Math.round((performance.now() - started) / 1000)} s`)
}

/** apt's sources in the base (the same mirrors), then the updates published since bookworm. */
function updateInside(root: string, mirror: { debian: string; security: string }): void {
  const sources = [
    `Types: deb\nURIs: ${mirror.debian}\nSuites: bookworm bookworm-updates\nComponents: main\n`,
    `Types: deb\nURIs: ${mirror.security}\nSuites: bookworm-security\nComponents: main\n`,
  ].map((s) => `${s}Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n`)
  rmSync(join(root, 'etc/apt/sources.list'), { force: true })
  writeFileSync(join(root, 'etc/apt/sources.list.d/debian.sources'), sources.join('\n'))
  run('mount', ['--bind', '/proc', join(root, 'proc')])
  try {
    const apt = 'DEBIAN_FRONTEND=noninteractive apt-get -qq'
    run('chroot', [root, 'sh', '-c', `${apt} update && ${apt} -y upgrade && ${apt} clean`])
  } finally {
    run('umount', [join(root, 'proc')])
  }
}

/** The Debian and Debian-security mirrors named in this machine's apt sources. */
function debianMirror(): { debian: string; security: string } {
  const dir = '/etc/apt/sources.list.d'
  const files = [
    '/etc/apt/sources.list',
    ...(existsSync(dir) ? readdirSync(dir).map((f) => join(dir, f)) : []),
  ].filter((f) => /\.(list|sources)$/.test(f) && existsSync(f))
  const uris = files.flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/(?:^URIs:\s*|^deb\s+(?:\[[^\]]*\]\s+)?)(\S+)/gm)].map(
      (m) => m[1].replace(/\/+$/, ''),
    ),
  )
  const debian = uris.find((u) => /\/debian$/.test(u)) ?? 'http://deb.debian.org/debian'
  const security =
    uris.find((u) => /\/debian-security$/.test(u)) ?? 'http://deb.debian.org/debian-security'
  return { debian, security }
}
