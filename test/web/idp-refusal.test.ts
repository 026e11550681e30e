// The sign-in page names the identity provider's refusal from `?idp=`, a value anyone can
// put in the address: only the reasons the service sends are words of their own, and any
// other value (an Object.prototype name included) shows the general refusal.
import assert from 'node:assert/strict'
import test from 'node:test'
import { createTenant, startTestServer } from '../helpers.ts'
import { textOf } from './page-client.ts'

const GENERAL = 'Your organisation’s sign-in was cancelled or refused.'

test('?idp= names a known refusal in words; any other value, constructor and __proto__ included, the general one', async (t) => {
  const server = await startTestServer(t)
  const tenant = await createTenant(server)
  const page = async (reason: string) => {
    const res = await fetch(
      `${server.url}/t/${tenant.slug}/sign-in?idp=${encodeURIComponent(reason)}`,
    )
    assert.equal(res.status, 401, reason)
    return textOf(await res.text())
  }
  assert.match(await page('invalid_state'), /That sign-in took too long or was already used/)
  for (const reason of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nonsense']) {
    const text = await page(reason)
    assert.ok(text.includes(GENERAL), `${reason}: ${text.slice(0, 300)}`)
    assert.doesNotMatch(text, /function|\[native code\]|\[object Object\]/, reason)
  }
})
