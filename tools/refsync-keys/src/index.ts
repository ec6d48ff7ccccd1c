export { CLIENT_NAME, generateApiKey, KEY_PREFIX, type GeneratedKey } from './keys';
