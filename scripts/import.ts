// npm run import -- --tenant SLUG --from auth0|supabase|firebase|csv FILE (CONTRACT §14).
// Streams an export of any size and posts it to POST /v1/{slug}/users/import in batches of
// 1,000 (and under the route's 2 MiB), two requests in flight, with an API key of the
// tenant (IMPORT_API_KEY) against the running service (--url, else PUBLIC_URL). Going
// through the API keeps one code path for the rules, the audit trail and the bounds on
// hashes. Existing users are skipped (or updated with --on-conflict update), so an
// interrupted import is finished by running the same command again. README, "Migrating users".
import { createReadStream, readFileSync, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'

export type Source = 'auth0' | 'supabase' | 'firebase' | 'csv'

/** A user as the import route takes it. */
export interface ImportUser {
  email: string
  emailVerified?: boolean
  passwordHash?: string
  passwordSalt?: string
  role?: 'Admin' | 'Member'
  status?: 'Active' | 'Suspended'
  createdAt?: string
  displayName?: string
  givenName?: string
  familyName?: string
  externalId?: string
  locale?: string
}

interface FirebaseHashConfig {
  signerKey: string
  saltSeparator: string
  rounds: number
  memCost: number
}

const BATCH_USERS = 1000
/** Under the route's 2 MiB, with room for the envelope. */
const BATCH_BYTES = 2 * 1024 * 1024 - 64 * 1024
const IN_FLIGHT = 2

const USAGE = `usage: npm run import -- --tenant SLUG --from auth0|supabase|firebase|csv FILE
  [--hashes FILE]         Auth0: the password-hash export (NDJSON), merged by email
  [--hash-config FILE]    Firebase: the project's hash parameters (JSON)
  [--on-conflict skip|update]   existing users (default skip)
  [--url URL]             the service (default PUBLIC_URL)
environment: IMPORT_API_KEY, an API key of the tenant`

/** Counts bytes read, for the progress bar's share of the file. */
interface Progress {
  bytes: number
}

function lines(file: string, progress: Progress) {
  const stream = createReadStream(file)
  stream.on('data', (chunk) => {
    progress.bytes += chunk.length
  })
  return createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined
}

function isoDate(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined
  const asNumber = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  const date = new Date(asNumber as string | number)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/** Drops undefined fields, so the request carries only what the export had. */
function compact(user: ImportUser): ImportUser {
  return Object.fromEntries(Object.entries(user).filter(([, v]) => v !== undefined)) as ImportUser
}

/**
 * Auth0: the bulk user export (NDJSON: email, email_verified, user_id, name, given_name,
 * family_name, created_at) and its password-hash export (NDJSON: email, passwordHash,
 * bcrypt), given with --hashes and merged by email (held in memory: about 100 bytes a user),
 * or either file alone.
 */
async function* auth0(file: string, progress: Progress, hashesFile?: string) {
  const hashes = new Map<string, string>()
  if (hashesFile) {
    for await (const line of lines(hashesFile, { bytes: 0 })) {
      if (!line.trim()) continue
      const row = JSON.parse(line)
      if (typeof row.email === 'string' && typeof row.passwordHash === 'string') {
        hashes.set(row.email.trim().toLowerCase(), row.passwordHash)
      }
    }
  }
  for await (const line of lines(file, progress)) {
    if (!line.trim()) continue
    const row = JSON.parse(line)
    const email = String(row.email ?? '')
    yield compact({
      email,
      emailVerified: row.email_verified === true || row.email_verified === 'true',
      passwordHash: text(row.passwordHash) ?? hashes.get(email.trim().toLowerCase()),
      displayName: text(row.name),
      givenName: text(row.given_name),
      familyName: text(row.family_name),
      externalId: text(row.user_id) ?? text(row._id?.$oid),
      createdAt: isoDate(
        typeof row.created_at === 'object' ? row.created_at?.$date : row.created_at,
      ),
    })
  }
}

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. */
async function* csvRecords(file: string, progress: Progress): AsyncGenerator<string[]> {
  let fields: string[] = []
  let field = ''
  let quoted = false
  for await (const line of lines(file, progress)) {
    if (!quoted && fields.length === 0 && field === '' && line === '') continue
    for (let i = 0; i < line.length; i++) {
      const c = line[i]
      if (quoted) {
        if (c === '"' && line[i + 1] === '"') {
          field += '"'
          i++
        } else if (c === '"') quoted = false
        else field += c
      } else if (c === '"') quoted = true
      else if (c === ',') {
        fields.push(field)
        field = ''
      } else field += c
    }
    if (quoted) {
      field += '\n'
      continue
    }
    fields.push(field)
    yield fields
    fields = []
    field = ''
  }
}

async function* csvRows(file: string, progress: Progress) {
  let header: string[] | undefined
  for await (const record of csvRecords(file, progress)) {
    if (!header) {
      header = record.map((h) => h.trim())
      continue
    }
    yield Object.fromEntries(header.map((h, i) => [h, record[i] ?? '']))
  }
}

/**
 * Supabase: auth.users as CSV with a header, as
 * `\copy (select id, email, encrypted_password, email_confirmed_at, created_at,
 * raw_user_meta_data from auth.users) to 'users.csv' csv header` writes it (bcrypt hashes).
 */
async function* supabase(file: string, progress: Progress) {
  for await (const row of csvRows(file, progress)) {
    let meta: Record<string, unknown> = {}
    try {
      meta = row.raw_user_meta_data ? JSON.parse(row.raw_user_meta_data) : {}
    } catch {
      meta = {}
    }
    yield compact({
      email: row.email ?? '',
      emailVerified: Boolean(row.email_confirmed_at),
      passwordHash: text(row.encrypted_password),
      displayName: text(meta.full_name) ?? text(meta.name),
      externalId: text(row.id),
      createdAt: isoDate(row.created_at),
    })
  }
}

/**
 * The objects of the `users` array of a JSON document, one at a time, whatever the layout:
 * `firebase auth:export users.json` writes `{"users": [{…}, …]}`.
 */
async function* jsonArrayObjects(file: string, progress: Progress) {
  let depth = 0
  let inString = false
  let escaped = false
  let current = ''
  for await (const line of lines(file, progress)) {
    for (const c of `${line}\n`) {
      if (inString) {
        if (depth >= 3) current += c
        if (escaped) escaped = false
        else if (c === '\\') escaped = true
        else if (c === '"') inString = false
        continue
      }
      if (c === '{' || c === '[') {
        depth++
        if (depth === 3) current = ''
      }
      if (depth >= 3) current += c
      if (c === '}' || c === ']') {
        if (depth === 3 && c === '}') yield JSON.parse(current)
        depth--
      }
      if (c === '"') inString = true
    }
  }
}

/** Firebase: `firebase auth:export users.json --format=json` (scrypt hashes, --hash-config). */
async function* firebase(file: string, progress: Progress) {
  for await (const row of jsonArrayObjects(file, progress)) {
    yield compact({
      email: String(row.email ?? ''),
      emailVerified: row.emailVerified === true,
      passwordHash: text(row.passwordHash),
      passwordSalt: text(row.salt),
      displayName: text(row.displayName),
      externalId: text(row.localId),
      status: row.disabled === true ? 'Suspended' : undefined,
      createdAt: isoDate(row.createdAt),
    })
  }
}

/** CSV with a header naming the route's fields (email, passwordHash, displayName, …). */
async function* csv(file: string, progress: Progress) {
  for await (const row of csvRows(file, progress)) {
    const bool = (v: string | undefined) =>
      v === undefined || v === '' ? undefined : v.toLowerCase() === 'true'
    yield compact({
      email: row.email ?? '',
      emailVerified: bool(row.emailVerified),
      passwordHash: text(row.passwordHash),
      passwordSalt: text(row.passwordSalt),
      role: (text(row.role) as ImportUser['role']) ?? undefined,
      status: (text(row.status) as ImportUser['status']) ?? undefined,
      createdAt: isoDate(row.createdAt),
      displayName: text(row.displayName),
      givenName: text(row.givenName),
      familyName: text(row.familyName),
      externalId: text(row.externalId),
      locale: text(row.locale),
    })
  }
}

export function readExport(
  source: Source,
  file: string,
  progress: Progress,
  options: { hashes?: string } = {},
): AsyncGenerator<ImportUser> {
  if (source === 'auth0') return auth0(file, progress, options.hashes)
  if (source === 'supabase') return supabase(file, progress)
  if (source === 'firebase') return firebase(file, progress)
  return csv(file, progress)
}

/** Firebase's parameters as the console prints them, or as the route names them. */
export function readHashConfig(file: string): FirebaseHashConfig {
  const raw = JSON.parse(readFileSync(file, 'utf8'))
  const config = raw.hash_config ?? raw.hashConfig ?? raw
  return {
    signerKey: config.signerKey ?? config.base64_signer_key,
    saltSeparator: config.saltSeparator ?? config.base64_salt_separator,
    rounds: Number(config.rounds),
    memCost: Number(config.memCost ?? config.mem_cost),
  }
}

export interface Summary {
  read: number
  created: number
  updated: number
  skipped: number
  errors: number
  reasons: Record<string, number>
}

export interface ImportOptions {
  url: string
  tenant: string
  apiKey: string
  source: Source
  file: string
  hashes?: string
  hashConfig?: FirebaseHashConfig
  onConflict?: 'skip' | 'update'
  /** Told after each batch; the CLI draws its progress bar with it. */
  onProgress?: (summary: Summary, share: number) => void
  /** Told of each row that did not go in (record number from 1, reason). */
  onProblem?: (record: number, reason: string) => void
}

export async function runImport(options: ImportOptions): Promise<Summary> {
  const summary: Summary = { read: 0, created: 0, updated: 0, skipped: 0, errors: 0, reasons: {} }
  const progress: Progress = { bytes: 0 }
  const size = statSync(options.file).size || 1
  const count = (status: string, reason: string | undefined, record: number) => {
    if (status === 'created') summary.created++
    else if (status === 'updated') summary.updated++
    else if (status === 'skipped') summary.skipped++
    else summary.errors++
    if (reason) summary.reasons[reason] = (summary.reasons[reason] ?? 0) + 1
    if (status === 'error') options.onProblem?.(record, reason ?? 'error')
  }
  const inFlight = new Set<Promise<void>>()
  const send = (batch: ImportUser[], records: number[]) => {
    const job = post(options, batch).then((results) => {
      for (const r of results) count(r.status, r.reason, records[r.index])
      options.onProgress?.(summary, Math.min(1, progress.bytes / size))
    })
    const tracked = job.finally(() => inFlight.delete(tracked))
    // Awaited by the next race or the final wait; this only keeps it from being "unhandled".
    tracked.catch(() => {})
    inFlight.add(tracked)
    return tracked
  }
  let batch: ImportUser[] = []
  let records: number[] = []
  let bytes = 0
  for await (const user of readExport(options.source, options.file, progress, options)) {
    summary.read++
    // A user with no address (Firebase's phone-only users) has nothing to sign in with here:
    // skipped, not sent. Every other rule of a row is the route's, answered row by row.
    if (user.email.trim() === '') {
      count('skipped', 'no_email', summary.read)
      continue
    }
    const size = JSON.stringify(user).length + 1
    if (batch.length === BATCH_USERS || (batch.length > 0 && bytes + size > BATCH_BYTES)) {
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight)
      send(batch, records)
      batch = []
      records = []
      bytes = 0
    }
    batch.push(user)
    records.push(summary.read)
    bytes += size
  }
  if (batch.length > 0) send(batch, records)
  await Promise.all(inFlight)
  options.onProgress?.(summary, 1)
  return summary
}

interface Result {
  index: number
  status: string
  reason?: string
}

/** One batch; 429 and 503 are waited out (Retry-After) and tried again. */
async function post(options: ImportOptions, users: ImportUser[]): Promise<Result[]> {
  const body = JSON.stringify({
    users,
    onConflict: options.onConflict ?? 'skip',
    ...(options.hashConfig ? { hashConfig: { firebase: options.hashConfig } } : {}),
  })
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(
      `${options.url.replace(/\/$/, '')}/v1/${encodeURIComponent(options.tenant)}/users/import`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.apiKey}` },
        body,
      },
    )
    if ((res.status === 429 || res.status === 503) && attempt < 20) {
      const wait = Number(res.headers.get('retry-after')) || 1
      await res.arrayBuffer()
      await new Promise((resolve) => setTimeout(resolve, wait * 1000))
      continue
    }
    const answer = await res.json().catch(() => ({}))
    if (res.status !== 200) {
      throw new Error(`the service answered ${res.status}: ${JSON.stringify(answer)}`)
    }
    return (answer as { results: Result[] }).results
  }
}

/** users, rate and ETA on one line, redrawn in place. */
function progressBar(started: number) {
  return (summary: Summary, share: number) => {
    const seconds = (performance.now() - started) / 1000
    const rate = summary.read / Math.max(seconds, 0.001)
    const eta = share > 0 ? (seconds / share) * (1 - share) : 0
    const width = 30
    const filled = Math.round(share * width)
    const clock = `${Math.floor(eta / 60)}:${String(Math.round(eta % 60)).padStart(2, '0')}`
    process.stderr.write(
      `\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${summary.read.toLocaleString('en')} users  ${Math.round(rate).toLocaleString('en')}/s  ETA ${clock} `,
    )
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      from: { type: 'string' },
      hashes: { type: 'string' },
      'hash-config': { type: 'string' },
      'on-conflict': { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean' },
    },
  })
  const source = values.from as Source
  const file = positionals[0]
  const apiKey = process.env.IMPORT_API_KEY
  const url = values.url ?? process.env.PUBLIC_URL
  const onConflict = values['on-conflict'] ?? 'skip'
  if (
    values.help ||
    !values.tenant ||
    !['auth0', 'supabase', 'firebase', 'csv'].includes(source) ||
    !file ||
    !['skip', 'update'].includes(onConflict)
  ) {
    console.error(USAGE)
    return 2
  }
  if (!apiKey || !url) {
    console.error(`${!apiKey ? 'IMPORT_API_KEY' : '--url or PUBLIC_URL'} is required\n${USAGE}`)
    return 2
  }
  const started = performance.now()
  const summary = await runImport({
    url,
    tenant: values.tenant,
    apiKey,
    source,
    file,
    hashes: values.hashes,
    hashConfig: values['hash-config'] ? readHashConfig(values['hash-config']) : undefined,
    onConflict: onConflict as 'skip' | 'update',
    onProgress: process.stderr.isTTY ? progressBar(started) : undefined,
    onProblem: (record, reason) => {
      if (!process.stderr.isTTY) console.error(`record ${record}: ${reason}`)
    },
  })
  if (process.stderr.isTTY) process.stderr.write('\n')
  const seconds = (performance.now() - started) / 1000
  const reasons = Object.entries(summary.reasons)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ')
  console.log(
    `${summary.read} read: ${summary.created} created, ${summary.updated} updated, ${summary.skipped} skipped, ${summary.errors} errors${reasons ? ` (${reasons})` : ''} in ${seconds.toFixed(1)} s`,
  )
  return summary.errors > 0 ? 1 : 0
}

if (import.meta.main) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(error instanceof Error ? error.message : error)
      process.exit(1)
    },
  )
}
