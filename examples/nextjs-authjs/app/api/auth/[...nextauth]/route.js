// Auth.js's routes: /api/auth/signin, /api/auth/callback/tenant-auth, /api/auth/signout, …
import { handlers } from '../../../../auth.js'

export const { GET, POST } = handlers
