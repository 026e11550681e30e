// Shapes of me/applications (CONTRACT §11, Consent): the applications the signed-in user
// has granted access to, and revoking one.
import { type Static, Type } from 'typebox'
import { DateTime, ref, TenantSlugParams } from '../../schemas.ts'

const ConnectedApplicationComponent = Type.Object(
  {
    clientId: Type.String({ description: 'The application’s OAuth client_id.' }),
    name: Type.String({ description: 'The application’s name.' }),
    scopes: Type.Array(Type.String(), {
      description:
        'What the user granted: OpenID scopes (`openid`, `email`, `profile`, ' +
        '`offline_access`) and the API resources’ scope names.',
    }),
    grantedAt: Type.String({
      ...DateTime,
      description: 'When the user first granted it (its oldest live grant).',
    }),
  },
  {
    $id: 'ConnectedApplication',
    description: 'An application the signed-in user has granted access to.',
  },
)

const ConnectedApplicationListComponent = Type.Object(
  { items: Type.Array(ref(ConnectedApplicationComponent)) },
  {
    $id: 'ConnectedApplicationList',
    description: 'The applications the signed-in user has granted access to, newest first.',
  },
)
export const ConnectedApplicationList = ref(ConnectedApplicationListComponent)
export type ConnectedApplicationList = Static<typeof ConnectedApplicationList>

/**
 * client_ids are random base64url (applications/service.ts); other characters are a 400.
 * The router matches no path parameter over 100 characters (Fastify's maxParamLength): 404.
 */
export const ConnectedApplicationParams = Type.Object({
  ...TenantSlugParams.properties,
  clientId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }),
})

/** The components of this module, registered by src/plugins/openapi.ts. */
export const connectedApplicationComponents = [
  ConnectedApplicationComponent,
  ConnectedApplicationListComponent,
]
