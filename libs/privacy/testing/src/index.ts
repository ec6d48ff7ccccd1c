export {
  accessTokenHash,
  createTestIssuer,
  DEFAULT_TEST_AUDIENCE,
  DEFAULT_TEST_ISSUER,
  dpopProof,
  newDpopKey,
  type CreateTestIssuerOptions,
  type DpopKey,
  type DpopProofOptions,
  type MintOptions,
  type SigningAlg,
  type TestAuthOptions,
  type TestIssuer,
  type TestScopeKind,
} from './test-issuer';
export { fnrBornOn, syntheticFnr } from './fnr';
export { trustedIssuer, type TrustedIssuer } from './trusted-issuer';
