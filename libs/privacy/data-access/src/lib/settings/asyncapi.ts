import { settingChangedSubject } from '@nhp/privacy-contracts';
import { asyncApiDocument } from '@nhp/shared-messaging';
import { privacyEventsStreamSpec, settingChangedEvent } from './events';

/**
 * The AsyncAPI 3 document of the events privacy-api publishes (served at GET /asyncapi.json and
 * written to docs/asyncapi/privacy-api.json by `npm run asyncapi`): its channel, stream and message
 * come from the event's own definition (`settingChangedEvent`), subject function and stream spec.
 */
export function privacyAsyncApiDocument() {
  return asyncApiDocument({
    title: 'privacy-api events',
    version: '1.0.0',
    description:
      'Events privacy-api publishes on NATS JetStream for downstream copies of citizens’ privacy settings. ' +
      'Each message is a CloudEvent 1.0 in structured mode (the body is the whole event as JSON). ' +
      'The data holds a national identity number: treat every event as personal data.',
    channels: [
      {
        id: 'settingChanged',
        address: settingChangedSubject('{partKode}'),
        parameters: {
          partKode: {
            description:
              'The party (partKode) that owns the definition; NATS permissions can give each party only its own subject.',
            examples: ['studie'],
          },
        },
        title: 'Setting changed',
        description:
          'A citizen’s setting of a definition with `replikering: true` changed (an `endret` answer of ' +
          'settinnbyggerspersonverninnstilling); an exact repeat (`ikkeEndret`) publishes nothing. `aktiv` is the ' +
          'value as the citizen set it; windows and periods are not applied.',
        event: settingChangedEvent,
        messageName: 'SettingChangedEvent',
        stream: privacyEventsStreamSpec,
        delivery:
          'At least once: the event is written with the change in one journaled write and published after that ' +
          'write is acknowledged, until JetStream acknowledges it. A re-publish within the duplicate window is ' +
          'dropped by the stream (Nats-Msg-Id = id); a later one may reach a consumer twice. Events of one setting ' +
          'are published in the order of its changes, and `sekvensnummer` grows by one per change of a citizen’s ' +
          'setting: keep the highest per (innbyggerFnr, definisjonGuid), and a gap means an event was missed.',
        example: {
          specversion: '1.0',
          id: '0b6a4c1e-6f59-4d7e-9a8e-3f2d1c0b9a87',
          source: '/nhp/privacy-api',
          type: 'no.nhp.privacy.setting-changed',
          time: '2026-11-23T18:02:11.532Z',
          datacontenttype: 'application/json',
          requestid: '5f0c2a4e-8d1b-4b6e-9f3a-2c7d1e0b4a96',
          data: {
            definisjonGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
            partKode: 'studie',
            typePi: 'reservasjon',
            innbyggerFnr: '13116900216',
            aktiv: true,
            sekvensnummer: 4,
            sistEndretTidspunkt: '2026-11-23T18:02:10.000Z',
          },
        },
      },
    ],
  });
}
