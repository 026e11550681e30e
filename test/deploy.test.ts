// What deploy/ and the Containerfile promise (CONTRACT §23), read as their tools read them:
// the Kubernetes base rendered by `kubectl kustomize` (probes on /ready and /health, a
// PodDisruptionBudget, a HorizontalPodAutoscaler, a migration Job, non-root, secrets only by
// reference), the compose file, and the image's start command. Every variable they set is one
// the service reads (a typo would be ignored by the service, silently), and none marked
// secret in the schema has its value written in them.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse, parseAllDocuments } from 'yaml'
import { ENV_SCHEMA } from '../src/config/schema.ts'
import type { Variable } from '../src/config/variables.ts'

const ROOT = join(import.meta.dirname, '..')
const VARIABLES = ENV_SCHEMA.properties as Record<string, Variable>
const SECRET = new Set(Object.keys(VARIABLES).filter((name) => VARIABLES[name].secret))
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const CONTAINERFILE = readFileSync(join(ROOT, 'Containerfile'), 'utf8')

/** Manifests are untyped YAML. */
type Manifest = any

const kubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' })
// CI installs kubectl (.ci/run): there the test never skips.
const noKubectl = kubectl.status === 0 || process.env.CI ? false : 'kubectl is not installed'

function rendered(): Manifest[] {
  const out = spawnSync('kubectl', ['kustomize', join(ROOT, 'deploy/kubernetes')], {
    encoding: 'utf8',
  })
  assert.equal(out.status, 0, out.stderr)
  return parseAllDocuments(out.stdout).map((d) => d.toJS())
}

function only(manifests: Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind)
  assert.equal(found.length, 1, `one ${kind}`)
  return found[0]
}

/** The image's USER, as `uid:gid`. */
function imageUser(): string {
  return /^USER\s+(\S+)/m.exec(CONTAINERFILE)?.[1] ?? ''
}

function checkContainer(container: Manifest, pod: Manifest, what: string): void {
  assert.equal(container.image, 'localhost/tenant-auth:latest', `${what}: the image`)
  assert.equal(pod.securityContext.runAsNonRoot, true, `${what}: non-root`)
  assert.equal(
    `${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`,
    imageUser(),
    `${what}: the image's user`,
  )
  assert.equal(container.securityContext.allowPrivilegeEscalation, false)
  assert.equal(container.securityContext.readOnlyRootFilesystem, true)
  assert.deepEqual(container.securityContext.capabilities.drop, ['ALL'])
  assert.ok(container.resources.requests.cpu && container.resources.requests.memory, what)
  // Secrets by reference: the operator's Secret, whole; no variable written here.
  assert.deepEqual(
    container.envFrom.map((e: Manifest) => e.configMapRef?.name ?? e.secretRef?.name),
    ['tenant-auth-config', 'tenant-auth-secrets'],
    `${what}: its settings from the ConfigMap and the Secret`,
  )
  assert.equal(container.env, undefined, `${what}: no variable of its own`)
}

test('the Kubernetes base: a Deployment ready on /ready, alive on /health, non-root', {
  skip: noKubectl,
}, () => {
  const manifests = rendered()
  const deployment = only(manifests, 'Deployment')
  const pod = deployment.spec.template.spec
  const [container] = pod.containers
  assert.equal(pod.containers.length, 1)
  checkContainer(container, pod, 'the service')
  const port = container.ports.find((p: Manifest) => p.name === 'http')
  assert.equal(port.containerPort, 3000)
  assert.deepEqual(container.readinessProbe.httpGet, { path: '/ready', port: 'http' })
  assert.deepEqual(container.livenessProbe.httpGet, { path: '/health', port: 'http' })
  assert.deepEqual(container.startupProbe.httpGet, { path: '/health', port: 'http' })
  assert.ok(deployment.spec.replicas >= 2, 'several instances (CONTRACT §15)')
  // The drain (SIGTERM) and the preStop pause fit in the grace period.
  assert.ok(pod.terminationGracePeriodSeconds >= 30)
})

test('the Kubernetes base: a PodDisruptionBudget, an autoscaler and a Service for its pods', {
  skip: noKubectl,
}, () => {
  const manifests = rendered()
  const labels = only(manifests, 'Deployment').spec.template.metadata.labels
  const selects = (selector: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => labels[k] === v)
  const pdb = only(manifests, 'PodDisruptionBudget')
  assert.ok(selects(pdb.spec.selector.matchLabels), 'the budget covers the pods')
  assert.ok(pdb.spec.minAvailable >= 1)
  const hpa = only(manifests, 'HorizontalPodAutoscaler')
  assert.deepEqual(hpa.spec.scaleTargetRef, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: 'tenant-auth',
  })
  assert.ok(hpa.spec.minReplicas >= 2 && hpa.spec.maxReplicas > hpa.spec.minReplicas)
  assert.ok(selects(only(manifests, 'Service').spec.selector), 'the Service reaches the pods')
})

test('the Kubernetes base: the migration Job runs package.json’s migrate script', {
  skip: noKubectl,
}, () => {
  const manifests = rendered()
  const job = only(manifests, 'Job')
  const pod = job.spec.template.spec
  const [container] = pod.containers
  checkContainer(container, pod, 'the migration')
  assert.deepEqual(container.command, ['node', '--run', 'migrate'])
  assert.equal(PACKAGE.scripts.migrate, 'node scripts/migrate.ts')
  // Its pods are not the service's: the Service and the budget never select them.
  const service = only(manifests, 'Service').spec.selector
  const labels = job.spec.template.metadata.labels
  assert.ok(Object.entries(service).some(([k, v]) => labels[k] !== v))
})

test('the Kubernetes base holds no secret: none in the ConfigMap, no Secret object', {
  skip: noKubectl,
}, () => {
  const manifests = rendered()
  assert.equal(manifests.filter((m) => m.kind === 'Secret').length, 0)
  const data = only(manifests, 'ConfigMap').data as Record<string, string>
  for (const name of Object.keys(data)) {
    assert.ok(name in VARIABLES, `${name}: a variable the service reads`)
    assert.ok(!SECRET.has(name), `${name}: a secret, kept in the Secret`)
  }
  assert.equal(data.NODE_ENV, 'production')
})

test('the compose file runs the image in production with PostgreSQL and Redis', () => {
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8'))
  assert.deepEqual(Object.keys(compose.services).sort(), ['postgres', 'redis', 'tenant-auth'])
  const service = compose.services['tenant-auth']
  assert.equal(service.image, 'localhost/tenant-auth:latest')
  const env = service.environment as Record<string, string>
  for (const [name, value] of Object.entries(env)) {
    assert.ok(name in VARIABLES, `${name}: a variable the service reads`)
    // A secret comes from deploy/.env or the shell (${…}), never written in the file; a URL
    // of the compose network's own services may be written, its password never.
    if (!SECRET.has(name)) continue
    const userinfo = /^[a-z]+:\/\/([^@/]*)@/.exec(value)?.[1]
    const reference = /^\$\{[A-Z_]+[:?-]/
    if (/^[a-z]+:\/\//.test(value)) {
      assert.ok(userinfo === undefined || userinfo.includes('${'), `${name}: no password written`)
    } else assert.match(value, reference, `${name}: by reference`)
  }
  assert.equal(env.NODE_ENV, 'production')
  assert.match(env.DATABASE_URL, /@postgres:5432\//)
  assert.equal(env.REDIS_URL, 'redis://redis:6379')
  for (const name of ['postgres', 'redis']) {
    assert.equal(service.depends_on[name].condition, 'service_healthy')
    assert.ok(compose.services[name].healthcheck.test, `${name} has a healthcheck`)
  }
})

test('the image starts the service as npm start does, as its own user, with a healthcheck', () => {
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(CONTAINERFILE)?.[1]
  assert.ok(cmd, 'CMD in exec form (so that SIGTERM reaches node, not a shell)')
  assert.deepEqual(JSON.parse(cmd), PACKAGE.scripts.start.split(/\s+/))
  assert.match(imageUser(), /^[1-9]\d*:[1-9]\d*$/, 'a numeric non-root user')
  assert.match(CONTAINERFILE, /^HEALTHCHECK [^\n]*\\\n\s*CMD [^\n]*\/health/m)
  assert.match(CONTAINERFILE, /^VOLUME \/data$/m)
  assert.match(CONTAINERFILE, /^ENV HOST=0\.0\.0\.0/m)
})
