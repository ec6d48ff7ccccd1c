export {
  callerOf,
  requireCitizen,
  requireScope,
  scopeName,
  setCaller,
  type Caller,
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
  AUTH_REFUSAL_REASONS,
  authRefusalReason,
  REFUSED_CODE,
  UNAUTHENTICATED_CODE,
  UNAVAILABLE_CODE,
  type AuthRefusalReason,
  type AuthScheme,
} from './errors';
export {
  createPrivacyAuth,
  type AuthRequest,
  type JwksSource,
  type PrivacyAuth,
  type PrivacyAuthOptions,
  type PrivacyAuthStats,
} from './privacy-auth';
