// The service's entry point: `node src/server.ts`. Before anything else loads it:
//   - sizes libuv's thread pool, which is fixed when it first starts: password hashes run
//     there, one per core and one more by default (HASH_CONCURRENCY), and file and DNS work needs
//     threads of its own beside them (UV_THREADPOOL_SIZE set by the operator wins);
//   - turns on Node's compile cache (NODE_COMPILE_CACHE, else a folder in the system's
//     temporary directory), so that every start after the first reuses the compiled
//     modules and the stripped TypeScript: about a third less CPU to import the service.
// Then main.ts starts it.
import { enableCompileCache } from 'node:module'
import { availableParallelism } from 'node:os'

process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, 2 * availableParallelism() + 2))
enableCompileCache()
await import('./main.ts')
