// Database failures (CONTRACT §8 and the fault rules): the log names a failure by its code
// and message, never the query's parameters (Drizzle's own message lists them: emails,
// hashes); a database that is not there is a 503 UNAVAILABLE, not a 500, and the service
// recovers by itself once it is back.
import assert from 'node:assert/strict'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { buildApp } from '../src/app.ts'
import { openDatabase } from '../src/db/client.ts'
import { databaseFailure, isDatabaseUnavailable, loggableError } from '../src/db/errors.ts'
import { sql } from '../src/db/orm.ts'
import { tenants } from '../src/db/schema.ts'
import { expectError } from './envelope.ts'
import { createTenant, eventually, startServer, type TestServer, testConfig } from './helpers.ts'

const SECRET = 'canary-7f3a9c@example.com'

describe('the log of a database failure', () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  async function failure(query: () => Promise<unknown>): Promise<Error> {
    try {
      await query()
    } catch (error) {
      return error as Error
    }
    throw new Error('the query did not fail')
  }

  test('holds the code and message, never the parameters', async () => {
    const error = await failure(() => server.deps.db.execute(sql`SELECT ${SECRET}::uuid`))
    assert.match(error.message, new RegExp(SECRET), "Drizzle's own message holds the parameter")
    const logged = JSON.stringify(loggableError(error))
    assert.doesNotMatch(logged, /canary/)
    assert.deepEqual(databaseFailure(error), {
      code: '22P02',
      message: 'invalid input syntax for type uuid',
    })
  })

  test('a unique violation: no value from its detail', async () => {
    const t = await createTenant(server)
    const now = new Date()
    const error = await failure(() =>
      server.deps.db.insert(tenants).values({
        id: crypto.randomUUID(),
        slug: t.slug,
        name: SECRET,
        createdAt: now,
        updatedAt: now,
      }),
    )
    const logged = JSON.stringify(loggableError(error))
    assert.doesNotMatch(logged, /canary/)
    assert.doesNotMatch(logged, new RegExp(t.slug))
    assert.equal(databaseFailure(error)?.code, '23505')
    assert.equal(isDatabaseUnavailable(error), false)
  })

  test('other errors keep their stack', () => {
    const logged = loggableError(new TypeError('boom'))
    assert.equal(logged.type, 'TypeError')
    assert.match(logged.stack, /boom/)
  })
})

test('a refused PostgreSQL connection counts as unavailable', async () => {
  const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none' })
  try {
    await assert.rejects(pool.query('SELECT 1'), (error: unknown) => isDatabaseUnavailable(error))
  } finally {
    await pool.end()
  }
})

// A TCP relay in front of PostgreSQL that the test can cut and restore, as a restart or a
// network partition would, without touching the machine's server.
class Relay {
  private server: Server | undefined
  private readonly sockets = new Set<Socket>()
  private readonly target: { host: string; port: number }
  port = 0
  constructor(target: { host: string; port: number }) {
    this.target = target
  }

  async open(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host)
      for (const s of [client, upstream]) {
        this.sockets.add(s)
        s.on('close', () => this.sockets.delete(s))
        s.on('error', () => {})
      }
      // Client to server through a gate that `freeze` closes (a server that stops
      // answering without closing its connections), server to client directly.
      client.on('data', (chunk) => {
        if (this.frozen) this.held.push([upstream, chunk])
        else upstream.write(chunk)
      })
      upstream.pipe(client)
    })
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
  }

  private frozen = false
  private held: [Socket, Buffer][] = []

  /** Stops forwarding what clients send: their queries get no answer. */
  freeze(): void {
    this.frozen = true
  }

  thaw(): void {
    this.frozen = false
    for (const [socket, chunk] of this.held) socket.write(chunk)
    this.held = []
  }

  async cut(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server?.close(() => resolve()))
  }
}

describe('PostgreSQL going away', {
  skip: !process.env.DATABASE_URL && 'needs DATABASE_URL',
}, () => {
  let relay: Relay
  let app: Awaited<ReturnType<typeof buildApp>>['app']
  let url: string
  let slug: string
  before(async () => {
    const target = new URL(process.env.DATABASE_URL as string)
    relay = new Relay({ host: target.hostname, port: Number(target.port || 5432) })
    await relay.open()
    target.host = `127.0.0.1:${relay.port}`
    const config = testConfig({ databaseUrl: target.toString(), redisUrl: undefined })
    const database = await openDatabase(config.databaseUrl, config.dataDir, {
      poolMode: config.databasePoolMode,
    })
    ;({ app } = await buildApp(config, {
      database,
      logger: false,
      purgeTimer: false,
      webhookWorker: false,
    }))
    app.addHook('onClose', () => database.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
    slug = (await createTenant({ request: send })).slug
  })
  after(async () => {
    await relay.cut().catch(() => {})
    await app.close()
  })

  async function send(method: string, path: string, body?: unknown) {
    const res = await fetch(url + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return { status: res.status, body: await res.json(), headers: res.headers } as never
  }

  test('requests answer 503 UNAVAILABLE while it is gone, and succeed once it is back', async () => {
    await relay.cut()
    // Past the tenant cache's 2 s, every route needs the database.
    await new Promise((r) => setTimeout(r, 2100))
    const started = Date.now()
    const down = await send('POST', `/v1/${slug}/auth/signup`, {
      email: 'x@example.com',
      password: 'plum-orbit-canvas-77',
    })
    expectError(down, 503, 'unavailable')
    assert.ok(Date.now() - started < 10_000, 'answered without waiting for the request timeout')
    const ready = await fetch(`${url}/ready`)
    assert.equal(ready.status, 503)

    await relay.open()
    const back = await eventually(
      async () => (await fetch(`${url}/v1/${slug}/auth/config`)).status === 200,
      10_000,
    )
    assert.ok(back, 'the service recovers by itself')
    assert.equal((await fetch(`${url}/ready`)).status, 200)
  })
})

describe('a transaction whose BEGIN gets no answer', {
  skip: !process.env.DATABASE_URL && 'needs DATABASE_URL',
}, () => {
  test('does not leak its connection: the pool keeps none checked out', async () => {
    const target = new URL(process.env.DATABASE_URL as string)
    const relay = new Relay({ host: target.hostname, port: Number(target.port || 5432) })
    await relay.open()
    target.host = `127.0.0.1:${relay.port}`
    const database = await openDatabase(target.toString(), '/tmp')
    try {
      // One connection, idle in the pool.
      await database.db.transaction(async (tx) => tx.execute(sql`SELECT 1`))
      relay.freeze()
      // BEGIN is sent on that connection and never answered: the query times out. Drizzle
      // sends BEGIN outside its try/finally, so nothing but the pool can give it back.
      await assert.rejects(
        database.db.transaction(async (tx) => tx.execute(sql`SELECT 1`)),
        (error: unknown) => isDatabaseUnavailable(error),
      )
      relay.thaw()
      const pool = database.pool?.()
      assert.ok(pool)
      assert.equal(pool.total - pool.idle, 0, 'a connection is still checked out: leaked')
      // And the pool still works.
      await database.db.transaction(async (tx) => tx.execute(sql`SELECT 1`))
    } finally {
      await database.close()
      await relay.cut()
    }
  })
})
