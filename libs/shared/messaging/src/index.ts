export {
  connectNats,
  drainNats,
  natsIsConnected,
  onNatsReconnect,
  tryConnectNats,
  type ConnectNatsOptions,
} from './connection';
export {
  ensureStream,
  provisionStreams,
  withReplicas,
  type ProvisionStreamsOptions,
  type StreamSpec,
} from './stream';
export {
  CLOUDEVENTS_CONTENT_TYPE,
  cloudEventEnvelopeSchema,
  contextFromHeaders,
  defineEvent,
  injectTraceHeaders,
  publishCloudEvent,
  subscribeCloudEvents,
  type CloudEvent,
  type EventDefinition,
  type EventEnvelopeSchema,
  type PublishOptions,
} from './cloudevents';
export type { NatsConnection, Subscription } from '@nats-io/transport-node';
export { MESSAGING_UNAVAILABLE, publishFailed } from './errors';
export {
  lazyOnceStore,
  openOnceStore,
  type OnceStore,
  type OpenOnceStoreOptions,
} from './once-store';
export { announceInvalidation, listenForInvalidations, type Invalidation } from './invalidation';
export {
  asyncApiDocument,
  type AsyncApiDocument,
  type AsyncApiEventChannel,
  type AsyncApiSpec,
} from './asyncapi';
