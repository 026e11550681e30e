// The variables the start reads before the configuration (src/server.ts, src/strip-cache.js)
// or that Node reads itself: declared here so that the reference documents them and no read of
// the service goes undeclared (test/config-reference.test.ts). config.ts checks none of them.
import Type from 'typebox'
import { text } from './variables.ts'

export const start = {
  UV_THREADPOOL_SIZE: Type.Optional(
    text({
      group: 'Start (read before the configuration)',
      kind: 'integer',
      shown: '2 × cores + 2 (set by `src/server.ts`)',
      description:
        "libuv's thread pool, where password hashes, file and DNS work run; read by Node when the pool starts.",
    }),
  ),
  STRIP_CACHE: Type.Optional(
    text({
      group: 'Start (read before the configuration)',
      kind: '`0`',
      shown: 'on',
      description:
        '`0` turns off the stripped-source cache `npm start` loads (`src/strip-cache.js`); Node then strips the TypeScript at every start.',
    }),
  ),
  STRIP_CACHE_DIR: Type.Optional(
    text({
      group: 'Start (read before the configuration)',
      kind: 'path',
      shown: '`node_modules/.cache/tenant-auth-stripped`',
      description:
        'Where the stripped sources are kept: a folder owned by root or the service’s user that no group or other user may write (else it is not used).',
    }),
  ),
  NODE_COMPILE_CACHE: Type.Optional(
    text({
      group: 'Start (read before the configuration)',
      kind: 'path',
      shown: '`$TMPDIR/node-compile-cache`',
      description:
        "Node's compile cache, turned on by `src/server.ts`: starts after the first import the service in about two thirds of the time.",
    }),
  ),
}
