export {
  callerOf,
  requireCitizen,
  requireScope,
  scopeName,
  setCaller,
  type AuthenticatedCaller,
  type ScopeKind,
} from './caller';
export {
  privacyAuthOptionsFromConfig,
  type AuthOptionsFromConfigExtras,
  type PrivacyAuthConfig,
} from './config';
export {
  defaultDevDataDir,
  DEV_ISSUER,
  DEV_JWKS_FILE,
  DEV_KEY_FILE,
  ensureDevKey,
  loadDevKey,
  type DevKey,
} from './dev-key';
export { htuOf, type DpopOptions, type SharedReplayStore } from './dpop';
export {
  ACCEPTED_ALGS,
  AUTH_DEPENDENCIES,
  AUTH_REFUSAL_REASONS,
  authRefusalReason,
  authUnavailableDependency,
  type AuthDependency,
  type AuthRefusalReason,
  type AuthScheme,
} from './errors';
export { type JwksSource } from './key-sources';
export {
  createPrivacyAuth,
  type AuthRequest,
  type PrivacyAuth,
  type PrivacyAuthOptions,
  type PrivacyAuthStats,
} from './privacy-auth';
