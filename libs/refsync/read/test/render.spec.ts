import type { ListedItem, ScannedListedItem } from '../src/ports';
import {
  joinBody,
  renderEmptyEnvelope,
  renderEnvelope,
  type ItemScan,
} from '../src/responses/render';

const item = (id: string, version: number, name = `Gruppe ${id}`, isDeleted = false) => ({
  itemId: id,
  item: {
    data: { id, name },
    version,
    lastChanged: new Date(Date.UTC(2026, 10, version, 2, 0, 3, 125)),
    isDeleted,
  } satisfies ListedItem,
});

/** A scan delivering `inOrder` through the callback and `late` as its result, as scanItems does. */
function scanOf(inOrder: ScannedListedItem[], late: ScannedListedItem[] = []): ItemScan {
  return async (onItem) => {
    for (const scanned of inOrder) onItem(scanned);
    return late;
  };
}

/** The reference: the whole envelope through JSON.stringify, items in response order. */
function expected(spelling: 'primary' | 'alternative', version: number, all: ScannedListedItem[]) {
  const envelope =
    spelling === 'primary'
      ? {
          currentVersion: version,
          items: all.map(({ item }) => ({
            data: item.data,
            version: item.version,
            lastChanged: item.lastChanged.toISOString(),
            isDeleted: item.isDeleted,
          })),
        }
      : {
          currentVersion: version,
          entries: all.map(({ item }) => ({ data: item.data, isDeleted: item.isDeleted })),
        };
  return JSON.stringify(envelope);
}

describe('renderEnvelope', () => {
  const sample = [
    item('a', 1, 'Tannlegebehandling – æøå'),
    item('b', 1, 'emoji 🦷 in a name'),
    item('c', 2, 'plain'),
    item('d', 3, 'slettet', true),
  ];

  it.each(['primary', 'alternative'] as const)(
    'when items arrive in order, then the %s bytes equal JSON.stringify of the whole envelope',
    async (spelling) => {
      const body = await renderEnvelope(spelling, 3, scanOf(sample));
      expect(joinBody(body).toString('utf8')).toBe(expected(spelling, 3, sample));
      expect(body.length).toBe(Buffer.byteLength(expected(spelling, 3, sample)));
    },
  );

  it('when there are no items, then the envelope has an empty list', async () => {
    expect(joinBody(await renderEmptyEnvelope('primary', 7)).toString()).toBe(
      '{"currentVersion":7,"items":[]}',
    );
    expect(joinBody(await renderEmptyEnvelope('alternative', 7)).toString()).toBe(
      '{"currentVersion":7,"entries":[]}',
    );
  });

  it('when late items arrive, then each is spliced in at its place in response order', async () => {
    // Multi-byte text before the splice points checks that offsets are bytes, not characters.
    const all = [
      item('a0', 1, 'først'),
      item('a1', 1, '🦷🦷'),
      item('a2', 1),
      item('b0', 2, 'ære'),
      item('b1', 2),
      item('c0', 3),
    ];
    const lateIds = new Set(['a0', 'b0', 'b1', 'c0']);
    const body = await renderEnvelope(
      'primary',
      3,
      scanOf(
        all.filter((s) => !lateIds.has(s.itemId)),
        all.filter((s) => lateIds.has(s.itemId)),
      ),
    );
    expect(joinBody(body).toString('utf8')).toBe(expected('primary', 3, all));
    expect(body.length).toBe(Buffer.byteLength(expected('primary', 3, all)));
  });

  it('when every item arrives late, then they form the list', async () => {
    const body = await renderEnvelope('alternative', 2, scanOf([], sample.slice(0, 3)));
    expect(joinBody(body).toString('utf8')).toBe(expected('alternative', 2, sample.slice(0, 3)));
  });

  it('when ids compare differently by UTF-8 bytes than by UTF-16, then late items follow byte order', async () => {
    // U+FF5E sorts after U+1F600 in UTF-16 code units (0xFF5E > 0xD83D) but before it in UTF-8
    // bytes (EF < F0), which is MongoDB's order.
    const inOrder = [item('\u{1F600}', 1)];
    const late = [item('\uFF5E', 1)];
    const body = await renderEnvelope('primary', 1, scanOf(inOrder, late));
    expect(joinBody(body).toString('utf8')).toBe(expected('primary', 1, [...late, ...inOrder]));
  });

  it('when the list is larger than a chunk, then it comes as several chunks with the same bytes', async () => {
    const many = Array.from({ length: 500 }, (_, i) =>
      item(`id${String(i).padStart(4, '0')}`, 1 + Math.floor(i / 100)),
    );
    const chunked = await renderEnvelope('primary', 5, scanOf(many), { chunkChars: 4096 });
    expect(chunked.chunks.length).toBeGreaterThan(10);
    expect(joinBody(chunked).toString('utf8')).toBe(expected('primary', 5, many));

    const late = [many[0], many[250], many[499]];
    const spliced = await renderEnvelope(
      'primary',
      5,
      scanOf(
        many.filter((s) => !late.includes(s)),
        late,
      ),
      { chunkChars: 4096 },
    );
    expect(joinBody(spliced).toString('utf8')).toBe(expected('primary', 5, many));
  });

  it('when the scan fails, then rendering fails with its error', async () => {
    const boom = new Error('cursor lost');
    await expect(
      renderEnvelope('primary', 1, async (onItem) => {
        onItem(item('a', 1));
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});
