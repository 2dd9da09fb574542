// Drivers of docs/remote-keys.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'remote-keys-jwks': excerpt(),
  'remote-keys-jwks-inline': excerpt(),
  'remote-keys-upstream': excerpt(),
};
