export {
  createSettingRepository,
  PROOFS_COLLECTION,
  SETTING_COUNTERS_COLLECTION,
  SETTING_HISTORY_LIMIT,
  SETTINGS_COLLECTION,
  type CreateSettingRepositoryOptions,
  type SettingRepository,
} from './setting.repository';
export {
  createSettingEventPublisher,
  PRIVACY_EVENT_SOURCE,
  privacyEventsStreamSpec,
  settingChangedEvent,
  type SettingEventPublisherOptions,
} from './events';
export { privacyAsyncApiDocument } from './asyncapi';
