// Drivers of docs/verify-endpoint.md's code blocks (see __tests__/fixtures/doc-run.ts): excerpts, type-checked.
import { excerpt, type DocDrivers } from '../fixtures/doc-run';

export const drivers: DocDrivers = {
  'verify-endpoint-mount': excerpt('declare const auth: TokenAuth;\n'),
  // The Shape B instance the page's endpoint serves, and your own user store.
  'verify-endpoint-profile': excerpt(`declare const auth: TokenAuth<VerifiedClaims>;
declare const users: {
  findByGoogleId(id: string | undefined): Promise<{ id: string; name: string; email: string; avatarUrl: string } | undefined>;
};
`),
};
