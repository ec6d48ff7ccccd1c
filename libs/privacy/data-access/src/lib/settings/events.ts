import {
  PRIVACY_EVENTS_STREAM,
  PRIVACY_EVENTS_SUBJECTS,
  SETTING_CHANGED_EVENT_TYPE,
  settingChangedEventDataSchema,
} from '@nhp/privacy-contracts';
import type { Logger } from '@nhp/shared-logger';
import {
  defineEvent,
  type CloudEvent,
  type EventDefinition,
  type NatsConnection,
  type StreamSpec,
} from '@nhp/shared-messaging';
import { createJetStreamPublisher, type PublishObserver } from '@nhp/shared-outbox';
import type { z } from 'zod';
import type { JournalEvent, JournalEventOrigin } from '../journal';

/** CloudEvents `source` of every event privacy-api emits. */
export const PRIVACY_EVENT_SOURCE = '/nhp/privacy-api';

export const settingChangedEvent = defineEvent({
  type: SETTING_CHANGED_EVENT_TYPE,
  source: PRIVACY_EVENT_SOURCE,
  dataSchema: settingChangedEventDataSchema,
});

/**
 * The stream downstream services consume from. File storage survives a NATS restart. The journal
 * re-publishes an event whose acknowledgement it did not see (a NATS outage, a crash between the ack
 * and pulling the entry); the duplicate window must cover the time until that retry, so it is two
 * hours, well beyond the sweeper's seconds and a NATS restart. 30 days of history let a consumer that
 * was away catch up.
 */
export const privacyEventsStreamSpec: StreamSpec = {
  name: PRIVACY_EVENTS_STREAM,
  subjects: [PRIVACY_EVENTS_SUBJECTS],
  storage: 'file',
  duplicateWindowMs: 2 * 60 * 60 * 1000,
  maxAgeMs: 30 * 24 * 60 * 60 * 1000,
};

export interface SettingEventPublisherOptions {
  /** The NATS connection, once there is one (the service starts without NATS). */
  nats: () => NatsConnection | undefined;
  logger: Logger;
  ackTimeoutMs?: number;
  /** The stream as configured (its replica count); default privacyEventsStreamSpec. */
  stream?: StreamSpec;
  /** Told of every publish and failed publish (privacy-api's metrics). */
  events?: PublishObserver;
}

/**
 * The journal's `publish`: a JournalEvent as a CloudEvent through JetStream (the shared outbox's
 * publisher), Nats-Msg-Id = the event id (one per change), resolved only once the stream
 * acknowledged it. The stream is provisioned before the first publish and again after a failure
 * (it may have been lost with a NATS server). A failure throws: the journal keeps the entry and
 * its sweeper tries again.
 */
export function createSettingEventPublisher(options: SettingEventPublisherOptions) {
  const jetStream = createJetStreamPublisher({
    nats: options.nats,
    stream: options.stream ?? privacyEventsStreamSpec,
    logger: options.logger,
    ackTimeoutMs: options.ackTimeoutMs,
    publishedLogLevel: 'debug',
    events: options.events,
  });

  return async function publish(
    event: JournalEvent,
    origin: JournalEventOrigin = {},
  ): Promise<void> {
    const envelope: CloudEvent = {
      specversion: '1.0',
      id: event.id,
      source: PRIVACY_EVENT_SOURCE,
      type: event.type,
      time: event.time,
      datacontenttype: 'application/json',
      // Extension attributes: the change's trace context (Distributed Tracing) and request id.
      ...origin.trace,
      ...(origin.requestId !== undefined ? { requestid: origin.requestId } : {}),
      data: event.data,
    };
    await jetStream.publish({
      id: event.id,
      subject: event.subject,
      event: envelope,
      ...(origin.trace ? { trace: origin.trace } : {}),
      // The setting-changed data is checked against its contract once more before it leaves.
      ...(event.type === SETTING_CHANGED_EVENT_TYPE
        ? { eventDef: settingChangedEvent as unknown as EventDefinition<z.ZodType> }
        : {}),
    });
  };
}
