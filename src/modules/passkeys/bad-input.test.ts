// Every bad input to the passkey routes answers the error envelope and changes nothing: no
// passkey, no spent challenge, no audit row (not even a failed sign-in), no session.
// Wrong types, missing members, oversized members, characters outside base64url, and
// base64url that decodes to garbage (checked before any challenge is spent).
import { before, describe, test } from 'node:test'
import { unchanged } from '../../../test/db.ts'
import { expectError } from '../../../test/envelope.ts'
import {
  registerPasskey,
  SoftAuthenticator,
  signInOptions,
} from '../../../test/fixtures/passkeys.ts'
import {
  createTenant,
  signup,
  startTestServer,
  type TenantFixture,
  type TestServer,
} from '../../../test/helpers.ts'

let server: TestServer
let t: TenantFixture
let token: string
let registration: ReturnType<SoftAuthenticator['create']>
let assertion: ReturnType<SoftAuthenticator['get']>
before(async (ctx) => {
  server = await startTestServer(ctx)
  t = await createTenant(server)
  const user = await signup(server, t.slug)
  token = user.accessToken
  const { authenticator } = await registerPasskey(server, t.slug, token)
  // A good registration response and a good assertion, with live challenges, to break.
  const begun = await server.request(
    'POST',
    `/v1/${t.slug}/me/passkeys/registration-options`,
    undefined,
    {
      token,
    },
  )
  registration = new SoftAuthenticator().create(begun.body)
  assertion = authenticator.get(await signInOptions(server, t.slug))
})

const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64url')
const big = (n: number) => 'A'.repeat(n)

/** A copy of `base` with `response.<path>` set (undefined: removed). */
function withMember(base: object, path: string[], value: unknown) {
  const copy = structuredClone(base) as Record<string, unknown>
  let at = copy
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>
  const last = path[path.length - 1]
  if (value === undefined) delete at[last]
  else at[last] = value
  return copy
}

function credentialCases(good: () => object, binary: string[]): [string, () => unknown][] {
  const cases: [string, () => unknown][] = [
    ['no response', () => ({})],
    ['response a string', () => ({ response: 'x' })],
    ['response null', () => ({ response: null })],
    ['response an array', () => ({ response: [good()] })],
    ['id missing', () => ({ response: withMember(good(), ['id'], undefined) })],
    ['id a number', () => ({ response: withMember(good(), ['id'], 42) })],
    ['id with + and /', () => ({ response: withMember(good(), ['id'], 'ab+/cdefghijklmnopqrst') })],
    ['id too short', () => ({ response: withMember(good(), ['id'], 'abc') })],
    ['id over 1364 characters', () => ({ response: withMember(good(), ['id'], big(1365)) })],
    ['rawId missing', () => ({ response: withMember(good(), ['rawId'], undefined) })],
    ['rawId another id', () => ({ response: withMember(good(), ['rawId'], b64('x'.repeat(16))) })],
    ['type not public-key', () => ({ response: withMember(good(), ['type'], 'password') })],
    [
      'the inner response missing',
      () => ({ response: withMember(good(), ['response'], undefined) }),
    ],
    ['the inner response a string', () => ({ response: withMember(good(), ['response'], 'x') })],
    [
      'authenticatorAttachment unknown',
      () => ({ response: withMember(good(), ['authenticatorAttachment'], 'usb') }),
    ],
    [
      'clientDataJSON not JSON',
      () => ({
        response: withMember(good(), ['response', 'clientDataJSON'], b64('not json at all')),
      }),
    ],
    [
      'clientDataJSON without a challenge',
      () => ({
        response: withMember(
          good(),
          ['response', 'clientDataJSON'],
          b64(JSON.stringify({ type: 'webauthn.get', origin: 'http://auth.test' })),
        ),
      }),
    ],
    [
      'clientDataJSON with a numeric challenge',
      () => ({
        response: withMember(
          good(),
          ['response', 'clientDataJSON'],
          b64(JSON.stringify({ type: 'webauthn.get', origin: 'x', challenge: 12345 })),
        ),
      }),
    ],
    [
      'clientDataJSON over 4096 characters',
      () => ({ response: withMember(good(), ['response', 'clientDataJSON'], big(4097)) }),
    ],
  ]
  for (const member of binary) {
    cases.push(
      [
        `${member} missing`,
        () => ({ response: withMember(good(), ['response', member], undefined) }),
      ],
      [`${member} a number`, () => ({ response: withMember(good(), ['response', member], 7) })],
      [
        `${member} with padding`,
        () => ({ response: withMember(good(), ['response', member], 'AAAA==') }),
      ],
      [
        `${member} with spaces`,
        () => ({ response: withMember(good(), ['response', member], 'AA AA') }),
      ],
    )
  }
  return cases
}

const registerCases = (): [string, () => unknown][] => [
  ...credentialCases(() => registration, ['clientDataJSON', 'attestationObject']),
  [
    'attestationObject over 24000 characters',
    () => ({ response: withMember(registration, ['response', 'attestationObject'], big(24_001)) }),
  ],
  [
    'attestationObject not CBOR',
    () => ({
      response: withMember(registration, ['response', 'attestationObject'], b64('garbage!')),
    }),
  ],
  [
    'transports not an array',
    () => ({ response: withMember(registration, ['response', 'transports'], 'usb') }),
  ],
  [
    'transports of 9',
    () => ({
      response: withMember(registration, ['response', 'transports'], Array(9).fill('usb')),
    }),
  ],
  [
    'a transport with capitals',
    () => ({ response: withMember(registration, ['response', 'transports'], ['USB']) }),
  ],
  ['name empty', () => ({ response: registration, name: '' })],
  ['name over 100 characters', () => ({ response: registration, name: 'n'.repeat(101) })],
  ['name a number', () => ({ response: registration, name: 7 })],
  ['name with NUL', () => ({ response: registration, name: 'a\u0000b' })],
]

const verifyCases = (): [string, () => unknown][] => [
  ...credentialCases(() => assertion, ['clientDataJSON', 'authenticatorData', 'signature']),
  [
    'authenticatorData too short (under 37 bytes)',
    () => ({
      response: withMember(assertion, ['response', 'authenticatorData'], b64('x'.repeat(20))),
    }),
  ],
  [
    'authenticatorData claiming attested data it lacks',
    () => ({
      response: withMember(
        assertion,
        ['response', 'authenticatorData'],
        b64(Buffer.concat([Buffer.alloc(32), Buffer.from([0x45]), Buffer.alloc(4)])),
      ),
    }),
  ],
  [
    'signature over 6000 characters',
    () => ({ response: withMember(assertion, ['response', 'signature'], big(6001)) }),
  ],
  [
    'userHandle over 64 bytes',
    () => ({ response: withMember(assertion, ['response', 'userHandle'], big(87)) }),
  ],
  [
    'userHandle null',
    () => ({ response: withMember(assertion, ['response', 'userHandle'], null) }),
  ],
]

const optionsCases: [string, unknown][] = [
  ['email a number', { email: 42 }],
  ['email null', { email: null }],
  ['email not an address', { email: 'nobody' }],
  ['email empty', { email: '' }],
  ['email over 254 characters', { email: `${'a'.repeat(64)}@${'b'.repeat(186)}.com` }],
  ['email with a zero-width space', { email: 'ada\u200b@example.com' }],
  ['email an array', { email: ['ada@example.com'] }],
  ['a JSON array', [{}]],
  ['a JSON string', 'ada@example.com'],
]

function refused(method: string, path: string, body: () => unknown, auth?: string) {
  return async () => {
    const res = await unchanged(server, t.tenantId, () =>
      server.request(method, `/v1/${t.slug}/${path}`, body(), { token: auth }),
    )
    expectError(res, 400, 'validation')
  }
}

function rawRefusals(method: string, path: string, auth?: () => string) {
  const raw: [string, string, string, string][] = [
    ['malformed JSON', '{"response": ', 'application/json', 'malformed_json'],
    ['a form body', 'response=x', 'application/x-www-form-urlencoded', 'unsupported_media_type'],
  ]
  for (const [name, body, type, reason] of raw) {
    test(name, async () => {
      const res = await unchanged(server, t.tenantId, () =>
        server.request(method, `/v1/${t.slug}/${path}`, undefined, {
          token: auth?.(),
          raw: body,
          headers: { 'content-type': type },
        }),
      )
      expectError(res, 400, reason)
    })
  }
  test('a body over 64 KiB', async () => {
    const res = await unchanged(server, t.tenantId, () =>
      server.request(
        method,
        `/v1/${t.slug}/${path}`,
        { response: { id: big(70_000) } },
        {
          token: auth?.(),
        },
      ),
    )
    expectError(res, 400, 'body_too_large')
  })
}

describe('POST me/passkeys refuses bad input with 400 and changes nothing', () => {
  for (const [name, body] of registerCases())
    test(name, () => refused('POST', 'me/passkeys', body, token)())
  rawRefusals('POST', 'me/passkeys', () => token)
})

describe('POST auth/passkey/verify refuses bad input with 400 and changes nothing', () => {
  for (const [name, body] of verifyCases()) test(name, refused('POST', 'auth/passkey/verify', body))
  rawRefusals('POST', 'auth/passkey/verify')
})

describe('POST auth/passkey/options refuses bad input with 400 and changes nothing', () => {
  for (const [name, body] of optionsCases)
    test(
      name,
      refused('POST', 'auth/passkey/options', () => body),
    )
  rawRefusals('POST', 'auth/passkey/options')
})

describe('POST me/passkeys/registration-options refuses a body it cannot parse', () => {
  rawRefusals('POST', 'me/passkeys/registration-options', () => token)
})

describe('DELETE me/passkeys/{id} refuses ids that are not UUIDs', () => {
  for (const id of ['1', 'not-a-uuid', `${crypto.randomUUID()}x`, '%00']) {
    test(JSON.stringify(id), async () => {
      const res = await unchanged(server, t.tenantId, () =>
        server.request('DELETE', `/v1/${t.slug}/me/passkeys/${id}`, undefined, { token }),
      )
      expectError(res, 400, 'validation')
    })
  }
})
