// env → config → listen (started by src/server.ts). SIGTERM drains in-flight requests,
// then exits 0.
import { buildApp } from './app.ts'
import { ConfigError, loadConfig } from './config.ts'
import { compactWhenIdle } from './lib/idle-compaction.ts'

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig(process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) console.error(`config error: ${problem}`)
      process.exit(1)
    }
    throw error
  }
  const { app } = await buildApp(config)
  let closing = false
  const close = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down')
    // Keep-alive connections would hold the close for Fastify's 72 s keep-alive timeout:
    // each one is closed as soon as its in-flight request has been answered.
    setInterval(() => app.server.closeIdleConnections(), 50).unref()
    try {
      await app.close()
      process.exit(0)
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void close('SIGTERM'))
  process.on('SIGINT', () => void close('SIGINT'))
  await app.listen({ port: config.port, host: config.host })
  // One line for the person who ran `npm start`: where to open the service. On stderr, so
  // that stdout stays one JSON object per line for whatever reads the log.
  console.error(`tenant-auth listening: open ${startUrl(config, app.server.address())}`)
  // npm start passes --expose-gc for this: empty heap pages go back once the service is idle.
  // Its timer never keeps the process alive, so the drain on SIGTERM needs no stop.
  compactWhenIdle(app.server, app.log)
}

/** PUBLIC_URL, or (left at its default) localhost at the port actually bound (PORT=0 picks one). */
function startUrl(config: { publicUrl: string; port: number }, bound: unknown): string {
  const port = (bound as { port?: number } | null)?.port ?? config.port
  const url =
    config.publicUrl === `http://localhost:${config.port}`
      ? `http://localhost:${port}`
      : config.publicUrl
  return `${url.replace(/\/+$/, '')}/`
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
