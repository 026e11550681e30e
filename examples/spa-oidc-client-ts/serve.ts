// Serves the single-page application: its two files, the oidc-client-ts browser bundle and
// config.json (the issuer and the application's client id, from the environment).
//
//   ISSUER=http://localhost:3000/oidc/acme CLIENT_ID=… PORT=5173 \
//     node examples/spa-oidc-client-ts/serve.ts
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const here = import.meta.dirname
// The library's browser bundle (a global `oidc`), beside the package.json it exports.
const bundle = join(
  dirname(createRequire(import.meta.url).resolve('oidc-client-ts/package.json')),
  'dist/browser/oidc-client-ts.min.js',
)
const port = Number(process.env.PORT ?? 5173)
const config = JSON.stringify({ issuer: required('ISSUER'), clientId: required('CLIENT_ID') })

const files: Record<string, [string, () => string]> = {
  '/': ['text/html', () => readFileSync(join(here, 'index.html'), 'utf8')],
  '/app.js': ['text/javascript', () => readFileSync(join(here, 'app.js'), 'utf8')],
  '/oidc-client-ts.min.js': ['text/javascript', () => readFileSync(bundle, 'utf8')],
  '/config.json': ['application/json', () => config],
}

createServer((req, res) => {
  const file = files[new URL(req.url ?? '/', 'http://x').pathname]
  if (!file) return res.writeHead(404).end()
  res.writeHead(200, { 'content-type': file[0], 'cache-control': 'no-store' }).end(file[1]())
}).listen(port, '127.0.0.1', () => console.log(`single-page app on http://localhost:${port}/`))

function required(name: string): string {
  const value = process.env[name]
  if (!value) {
    console.error(`${name} is required`)
    process.exit(2)
  }
  return value
}
