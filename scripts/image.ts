// npm run image [-- --refresh-base]: builds the container image `tenant-auth` (CONTRACT §23)
// from the Containerfile with podman (Debian's, which builds through buildah).
//
// The build context is a folder made here, not the checkout: the service's files as they run
// (src/ without its tests, the commands the image offers, the built console), their
// production dependencies installed by `npm ci --omit=dev` on this machine (whose npm the
// image does not need), and Node's binary from the pinned `node` package. The image has no
// npm: `node --run <script>` runs package.json's scripts. Nothing is downloaded beyond the
// npm registry (the dependencies) and Debian's mirror (the base, scripts/image-base.ts).
import { cpSync, globSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { capture, IMAGE, podmanArgs, podmanOk, run } from './container.ts'
import { ensureBase } from './image-base.ts'

const root = join(import.meta.dirname, '..')
/** CONTRACT §23. */
export const MAX_IMAGE_BYTES = 400 * 1000 * 1000

/** What the image runs, as paths in the checkout; the rest of the checkout stays out. */
const APP_FILES = [
  'package.json',
  'package-lock.json',
  'LICENSE',
  'src',
  'sdk/src', // the hosted pages call the API through the SDK's client
  'console/dist',
  // The operator's commands (package.json's migrate, purge, rotate-keys and import scripts).
  'scripts/migrate.ts',
  'scripts/purge.ts',
  'scripts/rotate-keys.ts',
  'scripts/import.ts',
]

/** Inside node_modules: what nothing loads at run time (source maps, types, docs, tests). */
const UNUSED_IN_MODULES = [
  '**/*.map',
  '**/*.d.ts',
  '**/*.d.mts',
  '**/*.d.cts',
  '**/*.md',
  '**/*.markdown',
  '**/test',
  '**/tests',
  '**/__tests__',
  '**/.github',
  '@types',
]

/** Builds the image; answers its size in bytes. Fails past MAX_IMAGE_BYTES. */
export function buildImage(refreshBase = false): number {
  const started = performance.now()
  ensureBase(refreshBase)
  run(process.execPath, [join(root, 'scripts/build-console.ts'), '--if-needed'])
  const previous = podmanOk('image', ['exists', IMAGE]) ? imageId() : undefined
  mkdirSync(join(root, '.tmp'), { recursive: true })
  const context = mkdtempSync(join(root, '.tmp', 'image-'))
  try {
    prepareContext(context)
    run(
      'podman',
      podmanArgs('build', [
        '--format',
        'docker',
        '-t',
        IMAGE,
        '-f',
        join(root, 'Containerfile'),
        context,
      ]),
    )
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
  // The image this build replaced, untagged now: removed (never another's dangling image).
  if (previous && previous !== imageId()) podmanOk('rmi', [previous])
  const bytes = Number(capture('podman', ['image', 'inspect', '--format', '{{.Size}}', IMAGE]))
  const seconds = Math.round((performance.now() - started) / 1000)
  console.log(`image: ${IMAGE} built in ${seconds} s, ${(bytes / 1e6).toFixed(1)} MB`)
  if (bytes > MAX_IMAGE_BYTES) {
    throw new Error(`image: ${bytes} bytes, larger than ${MAX_IMAGE_BYTES / 1e6} MB (CONTRACT §23)`)
  }
  return bytes
}

function imageId(): string {
  return capture('podman', ['image', 'inspect', '--format', '{{.Id}}', IMAGE])
}

function prepareContext(context: string): void {
  const app = join(context, 'app')
  for (const path of APP_FILES) {
    cpSync(join(root, path), join(app, path), {
      recursive: true,
      filter: (source) => !source.endsWith('.test.ts'),
    })
  }
  // No lifecycle scripts: the console is built already, and no production dependency needs one.
  run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app })
  const modules = join(app, 'node_modules')
  for (const path of globSync(UNUSED_IN_MODULES, { cwd: modules })) {
    if (/(^|\/)licen[cs]e[^/]*$/i.test(path)) continue // their licences travel with them
    rmSync(join(modules, path), { recursive: true, force: true })
  }
  rmSync(join(modules, '.package-lock.json'), { force: true })
  // The binary of the pinned `node` devDependency (the Node every test runs on).
  cpSync(join(root, 'node_modules/node/bin/node'), join(context, 'node'))
  mkdirSync(join(app, 'node_modules/.cache'), { recursive: true })
  // Nobody but root may change what runs (a change in the image itself would copy every file).
  run('chmod', ['-R', 'u=rwX,go=rX', context])
}

if (import.meta.main) buildImage(process.argv.includes('--refresh-base'))
