import { createHash } from 'node:crypto';
import type { UpstreamRecord } from '@nhp/refsync-sync';
import { parseUpstream } from '../src/parse-upstream';
import { AppError } from '@nhp/shared-errors';

/** Feeds the text in chunks of `size` bytes, so every boundary case gets crossed. */
async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

async function collect(text: string, size = 7): Promise<UpstreamRecord[]> {
  const out: UpstreamRecord[] = [];
  for await (const r of parseUpstream(chunked(text, size))) out.push(r);
  return out;
}

describe('parseUpstream', () => {
  const items = [
    { id: 'a', name: 'Å "quoted" ]}{[ , \\ ø', nested: { list: [1, 2, { x: [] }] } },
    { id: 'b', name: 'second', empty: {} },
    { id: 'c', name: 'third', n: -1.5e3, t: true, z: null },
    { id: 'd\\', name: 'back\\slash \\"quote\\" \\\\', tail: '\\' },
  ];

  it.each([1, 2, 3, 7, 64, 4096])(
    'when a JSON array arrives in %i-byte chunks, then every element is parsed with its position',
    async (size) => {
      const text = `\uFEFF  [\n${items.map((i) => JSON.stringify(i, null, 2)).join(',\n')}\n]\n`;
      const records = await collect(text, size);
      expect(records.map((r) => r.value)).toEqual(items);
      expect(records.map((r) => r.index)).toEqual([1, 2, 3, 4]);
      expect(records[1].line).toBeGreaterThan(records[0].line ?? 0);
    },
  );

  it.each([1, 3, 64, 4096])(
    'when elements arrive in %i-byte chunks, then each sourceHash is the hash of exactly its bytes',
    async (size) => {
      const texts = items.map((i) => JSON.stringify(i, null, 1));
      const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64');
      const array = await collect(`[${texts.join(' ,\n')}]`, size);
      expect(array.map((r) => r.sourceHash)).toEqual(texts.map(sha));
      const lines = items.map((i) => JSON.stringify(i));
      const ndjson = await collect(` ${lines.join(' \r\n\t')}\n`, size);
      expect(ndjson.map((r) => r.sourceHash)).toEqual(lines.map(sha));
    },
  );

  it('when an element is only reformatted, then its value is the same and its sourceHash is not', async () => {
    const [compact] = await collect('[{"id":"a","n":1}]');
    const [spaced] = await collect('[{"id": "a", "n": 1}]');
    expect(spaced.value).toEqual(compact.value);
    expect(spaced.sourceHash).not.toBe(compact.sourceHash);
  });

  it('when blank lines come first, then line numbers still count from the top of the file', async () => {
    const ndjson = await collect('\uFEFF\n\n{"id":"a"}\n\n{"id":"b"}\n', 2);
    expect(ndjson.map((r) => r.line)).toEqual([3, 5]);
    const array = await collect('\n\n[\n{"id":"a"},\n{"id":"b"}]', 2);
    expect(array.map((r) => r.line)).toEqual([4, 5]);
  });

  it('when the array holds scalars, then they are records too (the contract rejects them later)', async () => {
    const records = await collect('[1, "two" ,null,true]');
    expect(records.map((r) => r.value)).toEqual([1, 'two', null, true]);
  });

  it('when the input is NDJSON, then each non-blank line is one record', async () => {
    const text = items.map((i) => JSON.stringify(i)).join('\r\n') + '\n\n';
    const records = await collect(text, 5);
    expect(records.map((r) => r.value)).toEqual(items);
    expect(records.map((r) => r.line)).toEqual([1, 2, 3, 4]);
  });

  it('when one NDJSON line is not JSON, then that record carries the error and the others parse', async () => {
    const records = await collect('{"id":"a"}\n{"id": oops}\n{"id":"c"}\n');
    expect(records[1]).toMatchObject({
      index: 2,
      line: 2,
      error: expect.stringMatching(/not valid JSON/),
    });
    expect(records[2].value).toEqual({ id: 'c' });
  });

  it('when the NDJSON file is cut inside its last line, then the last record says it looks truncated', async () => {
    const records = await collect('{"id":"a"}\n{"id":"b","na');
    expect(records[1].error).toMatch(/truncated/);
  });

  it('when one array element is not JSON, then that record carries the error', async () => {
    const records = await collect('[{"id":"a"}, {"id": tru}, {"id":"c"}]');
    expect(records.map((r) => r.error === undefined)).toEqual([true, false, true]);
  });

  it('when the array is not closed, then reading fails as truncated', async () => {
    await expect(collect('[{"id":"a"},{"id":"b"}')).rejects.toMatchObject({
      code: 'UPSTREAM_TRUNCATED',
    });
    await expect(collect('[{"id":"a"},{"id":"b"')).rejects.toBeInstanceOf(AppError);
  });

  it('when the array structure is broken, then reading fails as malformed', async () => {
    await expect(collect('[{"id":"a"} {"id":"b"}]')).rejects.toMatchObject({
      code: 'UPSTREAM_MALFORMED',
    });
    await expect(collect('[,{"id":"a"}]')).rejects.toMatchObject({ code: 'UPSTREAM_MALFORMED' });
    await expect(collect('[{"id":"a"}] trailing')).rejects.toMatchObject({
      code: 'UPSTREAM_MALFORMED',
    });
  });

  it('when the input is empty or an empty array, then there are no records', async () => {
    expect(await collect('')).toEqual([]);
    expect(await collect('  \n ')).toEqual([]);
    expect(await collect('[ ]')).toEqual([]);
  });
});
