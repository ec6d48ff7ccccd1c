import type { DatasetReader } from '../src/ports';
import { CONTENT_ENCODINGS, ResponseStore, type Selection } from '../src/responses/response-store';

const unusedReader = {} as DatasetReader; // etag() never reads
const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const store = () =>
  new ResponseStore({
    reader: unusedReader,
    maxBytes: 1024,
    logger,
  });
const sel = (over: Partial<Selection> = {}): Selection => ({
  dataset: 'reimbursementGroup',
  spelling: 'primary',
  since: undefined,
  ...over,
});

describe('ResponseStore.etag', () => {
  it('when asked for every selection and coding, then each gets its own ETag, the same one each time', () => {
    const s = store();
    const selections = (['treatmentGroup', 'reimbursementGroup'] as const).flatMap((dataset) =>
      (['primary', 'alternative'] as const).flatMap((spelling) =>
        [undefined, 0, 3].map((since) => sel({ dataset, spelling, since })),
      ),
    );
    const tags = selections.flatMap((selection) =>
      CONTENT_ENCODINGS.map((encoding) => s.etag(selection, 5, encoding)),
    );
    expect(new Set(tags).size).toBe(tags.length);
    const again = selections.flatMap((selection) =>
      CONTENT_ENCODINGS.map((encoding) => s.etag(selection, 5, encoding)),
    );
    expect(again).toEqual(tags);
    expect(s.etag(sel(), 5, 'gzip')).toBe('"v5.rg.p.all.gz"');
    expect(
      s.etag(sel({ dataset: 'treatmentGroup', spelling: 'alternative', since: 3 }), 5, 'br'),
    ).toBe('"v5.tg.a.s3.br"');
  });

  it('when the version moves, then the ETags follow it, and going back gives the old ones again', () => {
    const s = store();
    expect(s.etag(sel(), 5, 'identity')).toBe('"v5.rg.p.all.id"');
    expect(s.etag(sel({ since: 4 }), 6, 'identity')).toBe('"v6.rg.p.s4.id"');
    expect(s.etag(sel(), 6, 'identity')).toBe('"v6.rg.p.all.id"');
    expect(s.etag(sel(), 5, 'identity')).toBe('"v5.rg.p.all.id"');
  });

  it('when sinceVersion is at or above the version, then it shares the ETag of sinceVersion = version', () => {
    const s = store();
    expect(s.etag(sel({ since: 9 }), 7, 'gzip')).toBe(s.etag(sel({ since: 7 }), 7, 'gzip'));
    expect(s.etag(sel({ since: 7 }), 7, 'gzip')).toBe('"v7.rg.p.s7.gz"');
  });

  it('when clients use many sinceVersion values, then every ETag is still right', () => {
    const s = store();
    for (let since = 0; since < 200; since++) {
      expect(s.etag(sel({ since }), 300, 'br')).toBe(`"v300.rg.p.s${since}.br"`);
    }
    expect(s.etag(sel({ since: 1 }), 300, 'br')).toBe('"v300.rg.p.s1.br"');
  });
});

describe('ResponseStore: the byte bound (lru-cache, maxSize + sizeCalculation)', () => {
  /** Every selection lists the same 20 items, so every body has the same size. */
  const reader: DatasetReader = {
    currentVersion: async () => 5,
    scanItems: async (_dataset, _options, onItem) => {
      for (let i = 0; i < 20; i++) {
        const id = `RG-${String(i).padStart(3, '0')}`;
        onItem({
          itemId: id,
          item: {
            data: { id, text: 'x'.repeat(50) },
            version: 1,
            lastChanged: new Date(0),
            isDeleted: false,
          },
        });
      }
      return [];
    },
  };
  const storeOf = (maxBytes: number) => {
    const s = new ResponseStore({ reader, maxBytes, logger });
    s.setCurrentVersion(5);
    return s;
  };

  it('when bodies exceed the bound, then the least recently used goes and the bytes stay within it', async () => {
    const size = (await storeOf(1024 * 1024).obtain(sel({ since: 0 }), 5, 'identity')).body.length;
    const bound = 2 * (size + 512) + 10;
    const s = storeOf(bound);
    const a = s.etag(sel({ since: 0 }), 5, 'identity');
    const b = s.etag(sel({ since: 1 }), 5, 'identity');
    const c = s.etag(sel({ since: 2 }), 5, 'identity');
    await s.obtain(sel({ since: 0 }), 5, 'identity');
    await s.obtain(sel({ since: 1 }), 5, 'identity');
    expect(s.peek(a)).toBeDefined(); // a is now the most recently used
    await s.obtain(sel({ since: 2 }), 5, 'identity');
    expect(s.peek(b)).toBeUndefined();
    expect(s.peek(a)).toBeDefined();
    expect(s.peek(c)).toBeDefined();
    expect(s.usage()).toEqual({ entries: 2, bytes: 2 * (size + 512), maxBytes: bound });
  });

  it('when one body is larger than the whole bound, then it is served but not kept', async () => {
    const s = storeOf(600);
    const response = await s.obtain(sel(), 5, 'identity');
    expect(response.body.length).toBeGreaterThan(600);
    expect(s.peek(response.etag)).toBeUndefined();
    expect(s.usage().entries).toBe(0);
  });

  it('when the version moves on, then the entries of other versions are dropped', async () => {
    const s = storeOf(1024 * 1024);
    await s.obtain(sel(), 5, 'identity');
    await s.obtain(sel({ since: 0 }), 5, 'identity');
    expect(s.setCurrentVersion(6)).toBe(2);
    expect(s.usage()).toMatchObject({ entries: 0, bytes: 0 });
  });
});
