// The issuer itself (oidc-provider, an ES module) is started by main.ts; this entry point is what
// other projects' tests use: the clients file and the stack of processes.
export {
  clientsFilePath,
  DEV_ISSUER_PORT,
  readClients,
  registerClient,
  SCOPE_KINDS,
  type ClientRegistration,
  type ClientsFile,
  type NewClient,
  type RegisteredClient,
  type ScopeKind,
} from './clients';
export { startPrivacyStack, type PrivacyStack } from './stack';
