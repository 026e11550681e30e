// The service's entry point: `node src/server.ts`. It turns on Node's compile cache first
// (NODE_COMPILE_CACHE, else a folder in the system's temporary directory), so that every
// start after the first reuses the compiled modules and the stripped TypeScript: about a
// third less CPU to import the service (issue 10, start to ready). Then main.ts starts it.
import { enableCompileCache } from 'node:module'

enableCompileCache()
await import('./main.ts')
