// Drivers of docs/recipes.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'recipes-auth0': excerpt(),
  'recipes-okta': excerpt(),
  'recipes-keycloak': excerpt(),
  'recipes-entra': excerpt(),
  'recipes-cognito': excerpt(),
  'recipes-identity-service': excerpt(),
  // The route of the page's identity-service recipe: its `auth` is the block before, 'strict' by default.
  'recipes-shape-b-route': excerpt(
    "const auth = createTokenAuth({ key: { upstream: 'https://identity.example.com' }, issuer: 'auth.example.com', audience: 'api.example.com' });\n",
  ),
};
