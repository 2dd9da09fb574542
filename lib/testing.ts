// The `express-verified-user/testing` entry: a test issuer that mints tokens (HS, RS, ES, EdDSA; JWKS, discovery and
// RFC 8693 token exchange on loopback; DPoP holders) for the app's own tests.
export { createTestIssuer, type TestIssuer, type TestIssuerOptions } from './testing/issuer';
export type { TestExchangeOptions } from './testing/exchange';
export { createDpopHolder, type DpopHolder, type DpopProofRequest } from './testing/dpop-holder';
export { signToken, type TestSigningAlgorithm } from './jose/sign';
