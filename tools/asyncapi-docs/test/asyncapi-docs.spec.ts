/**
 * The AsyncAPI documents in docs/asyncapi: current (what the events' zod schemas make now, so a
 * field renamed in a schema without `npm run asyncapi` fails here), valid for @asyncapi/parser,
 * and a working check of messages (AsyncApiContract, which the services' event tests use on every
 * event they capture from nats-server).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AsyncApiContract, asyncApiProblems } from '@nhp/shared-testing';
import { ASYNCAPI_DOCUMENTS } from '../src/documents';

const ROOT = resolve(__dirname, '../../..');

interface Doc {
  asyncapi: string;
  channels: Record<string, { address: string; 'x-jetstream': { stream: string } }>;
  components: { messages: Record<string, { examples?: Array<{ payload: unknown }> }> };
}

describe.each(ASYNCAPI_DOCUMENTS)('$path', ({ path, build, exampleSubject }) => {
  const written = JSON.parse(readFileSync(resolve(ROOT, path), 'utf8')) as Doc;

  it('when the document is made from the event schemas, then the file in the repository is the same (npm run asyncapi writes it)', () => {
    expect(written).toEqual(JSON.parse(JSON.stringify(build())));
  });

  it('when @asyncapi/parser reads the file, then it is an AsyncAPI 3 document without errors or warnings', async () => {
    expect(written.asyncapi).toMatch(/^3\./);
    expect(await asyncApiProblems(written)).toEqual([]);
  });

  it('when its examples are checked against it, then they fit their channel', () => {
    const contract = new AsyncApiContract(written);
    const examples = Object.values(written.components.messages).flatMap((m) => m.examples ?? []);
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      expect(contract.problems({ subject: exampleSubject, payload: example.payload })).toEqual([]);
    }
  });

  it('when an event has a field renamed, lacks one, carries another type or comes on another subject, then the check names what is wrong', () => {
    const contract = new AsyncApiContract(written);
    const example = Object.values(written.components.messages)[0]?.examples?.[0]?.payload as {
      data: Record<string, unknown>;
      type: string;
    };
    const [first, ...rest] = Object.keys(example.data);
    const renamed = {
      ...example,
      data: {
        [`${first}Renamed`]: example.data[first as string],
        ...Object.fromEntries(rest.map((k) => [k, example.data[k]])),
      },
    };
    expect(contract.problems({ subject: exampleSubject, payload: renamed })).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`must have required property '${first}'`),
        expect.stringContaining('must NOT have additional properties'),
      ]),
    );
    expect(
      contract.problems({ subject: exampleSubject, payload: { ...example, type: 'other' } }),
    ).not.toEqual([]);
    expect(contract.problems({ subject: 'elsewhere.events.x', payload: example })).toEqual([
      'subject elsewhere.events.x is no channel of the document',
    ]);
    expect(
      contract.problems({
        subject: exampleSubject,
        payload: example,
        headers: { 'Content-Type': 'application/json' },
      }),
    ).not.toEqual([]);
  });
});
