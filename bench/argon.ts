// The login ceiling: how many argon2id verifies a second this machine does with k in
// flight, for each k. Its own process, so that the libuv pool can be sized for the widest k
// (the pool size is read once, when the pool first starts). Prints JSON on stdout.
//   node bench/argon.ts [seconds per k] [k,k,…]
import { hash, verify } from '@node-rs/argon2'
import { ARGON2_PARAMS } from '../src/lib/passwords.ts'

const seconds = Number(process.argv[2] ?? 3)
const widths = (process.argv[3] ?? '1,2,3,4,6,8').split(',').map(Number)
const password = 'plum-orbit-canvas-77'
const stored = await hash(password, ARGON2_PARAMS)
for (let i = 0; i < 4; i++) await verify(stored, password)

const rates: Record<string, number> = {}
for (const k of widths) {
  let done = 0
  const until = performance.now() + seconds * 1000
  const worker = async () => {
    while (performance.now() < until) {
      await verify(stored, password)
      done++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: k }, worker))
  rates[k] = done / ((performance.now() - started) / 1000)
}
const start = performance.now()
for (let i = 0; i < 20; i++) await verify(stored, password)
const verifyMs = (performance.now() - start) / 20
process.stdout.write(`${JSON.stringify({ verifyMs, rates })}\n`)
