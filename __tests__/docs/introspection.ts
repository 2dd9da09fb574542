// Drivers of docs/introspection.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'introspection-discovery': excerpt(),
  'introspection-keycloak': excerpt(),
  'introspection-okta': excerpt(),
  'introspection-hydra': excerpt(),
};
