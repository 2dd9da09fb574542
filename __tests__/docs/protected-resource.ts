// Drivers of docs/protected-resource.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'protected-resource-metadata': excerpt('declare const mcpHandler: express.RequestHandler;\n'),
  'protected-resource-step-up': excerpt('declare const auth: TokenAuth;\n'),
  'protected-resource-per-request': excerpt('declare const auth: TokenAuth;\n'),
};
