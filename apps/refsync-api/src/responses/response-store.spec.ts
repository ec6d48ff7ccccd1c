import { createLogger } from '@nhp/shared-logger';
import type { DatasetReader } from '../datasets';
import { CONTENT_ENCODINGS, ResponseStore, type Selection } from './response-store';

const unusedReader = {} as DatasetReader; // etag() never reads
const store = () =>
  new ResponseStore({
    reader: unusedReader,
    maxBytes: 1024,
    logger: createLogger({ name: 'test', level: 'silent' }),
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
