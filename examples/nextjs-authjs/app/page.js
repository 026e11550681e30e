// The home page, rendered on the server: who is signed in, with a button to sign in or out.
import { auth, signIn, signOut } from '../auth.js'

export default async function Home() {
  const session = await auth()
  if (!session?.user) {
    return (
      <main>
        <p id="who">Not signed in</p>
        <form
          action={async () => {
            'use server'
            await signIn('tenant-auth')
          }}
        >
          <button type="submit">Sign in</button>
        </form>
      </main>
    )
  }
  return (
    <main>
      <p id="who">Signed in as {session.user.email}</p>
      <p id="sub">{session.user.id}</p>
      <form
        action={async () => {
          'use server'
          await signOut()
        }}
      >
        <button type="submit">Sign out</button>
      </form>
    </main>
  )
}
