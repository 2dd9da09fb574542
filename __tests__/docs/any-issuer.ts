// Drivers of docs/any-issuer.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'any-issuer-discovery': excerpt(),
  'any-issuer-several': excerpt('declare const audience: string;\n'),
};
