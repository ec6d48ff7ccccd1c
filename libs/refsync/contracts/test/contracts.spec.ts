import { z } from 'zod';
import {
  altEnvelopeSchema,
  altEnvelopeSchemas,
  envelopeSchema,
  envelopeSchemas,
  itemDataSchemas,
  problemDetailsSchema,
  reimbursementGroupDataSchema,
  syncCompletedEventDataSchema,
  syncCompletedEventId,
  treatmentGroupDataSchema,
  type ReimbursementGroupData,
  type SyncCompletedEventData,
} from '../src/index';

const reimbursementGroup = (): ReimbursementGroupData => ({
  id: 'A10AE04_1',
  legalBasis: {
    coding: [{ system: 'urn:oid:2.16.578.1.12.4.1.1.7427', code: '200', display: '§5-14 §2' }],
  },
  indications: [
    {
      coding: [
        { system: 'urn:oid:2.16.578.1.12.4.1.1.7170', code: 'T90', display: 'Diabetes type 2' },
      ],
    },
    {
      coding: [
        {
          system: 'urn:oid:2.16.578.1.12.4.1.1.7110',
          code: 'E11',
          display: 'Diabetes mellitus type 2',
        },
      ],
    },
  ],
  medicines: [
    {
      reference: null,
      type: 'Legemiddelpakning',
      identifier: { system: 'varenummer', value: '526181' },
      display: 'Lantus inj 100 E/ml',
    },
  ],
});

const counts = { added: 0, updated: 0, deleted: 0, total: 10 };
const event = (over: Partial<SyncCompletedEventData> = {}): SyncCompletedEventData => ({
  runId: 'run-1',
  previousVersion: 3,
  currentVersion: 4,
  changed: true,
  datasets: { treatmentGroup: { ...counts, added: 1 }, reimbursementGroup: counts },
  startedAt: '2026-11-22T02:00:00.000Z',
  completedAt: '2026-11-22T02:00:03.125Z',
  source: {
    treatmentGroup: 'file:///data/tg.json',
    reimbursementGroup: 'https://upstream.example/rg',
  },
  ...over,
});

describe('reimbursement group data', () => {
  it('when the data has exactly the interface fields, then it validates', () => {
    expect(reimbursementGroupDataSchema.parse(reimbursementGroup())).toEqual(reimbursementGroup());
  });

  it('when medicines is empty, then it validates', () => {
    expect(
      reimbursementGroupDataSchema.safeParse({ ...reimbursementGroup(), medicines: [] }).success,
    ).toBe(true);
  });

  it.each([
    ['top level', (d: Record<string, unknown>) => ({ ...d, note: 'x' })],
    [
      'coded concept',
      (d: ReimbursementGroupData) => ({ ...d, legalBasis: { ...d.legalBasis, text: 'x' } }),
    ],
    [
      'coding',
      (d: ReimbursementGroupData) => ({
        ...d,
        legalBasis: { coding: [{ ...d.legalBasis.coding[0], version: '1' }] },
      }),
    ],
    [
      'medicine reference',
      (d: ReimbursementGroupData) => ({ ...d, medicines: [{ ...d.medicines[0], extra: 1 }] }),
    ],
    [
      'identifier',
      (d: ReimbursementGroupData) => ({
        ...d,
        medicines: [
          { ...d.medicines[0], identifier: { ...d.medicines[0].identifier, use: 'official' } },
        ],
      }),
    ],
  ])('when an unknown property is added at the %s, then it is rejected', (_where, mutate) => {
    const result = reimbursementGroupDataSchema.safeParse(mutate(reimbursementGroup() as never));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.code).toBe('unrecognized_keys');
  });

  it('when a required field is missing or the id is empty, then it is rejected', () => {
    const { medicines: _m, ...withoutMedicines } = reimbursementGroup();
    expect(reimbursementGroupDataSchema.safeParse(withoutMedicines).success).toBe(false);
    expect(
      reimbursementGroupDataSchema.safeParse({ ...reimbursementGroup(), id: '' }).success,
    ).toBe(false);
  });

  it('when a medicine reference omits its nullable fields instead of sending null, then it is rejected', () => {
    const { display: _d, ...medicine } = reimbursementGroup().medicines[0];
    expect(
      reimbursementGroupDataSchema.safeParse({ ...reimbursementGroup(), medicines: [medicine] })
        .success,
    ).toBe(false);
  });
});

describe('treatment group data', () => {
  it('when upstream sends extra fields, then they are kept as they came', () => {
    const data = {
      id: 'BG-001',
      name: 'Diabetes',
      description: 'Legemidler ved diabetes',
      atcCodes: ['A10'],
      validFrom: '2024-01-01',
      nested: { a: [1, { b: null }], empty: {} },
    };
    expect(treatmentGroupDataSchema.parse(data)).toEqual(data);
  });

  it.each([
    ['id missing', { name: 'x' }],
    ['name missing', { id: 'x' }],
    ['empty name', { id: 'x', name: '' }],
    ['numeric id', { id: 1, name: 'x' }],
  ])('when %s, then it is rejected', (_case, data) => {
    expect(treatmentGroupDataSchema.safeParse(data).success).toBe(false);
  });
});

describe('envelopes', () => {
  const item = {
    data: reimbursementGroup(),
    version: 4,
    lastChanged: '2026-11-22T02:00:03.125Z',
    isDeleted: false,
  };

  it('when the primary envelope is well formed, then it validates', () => {
    expect(
      envelopeSchemas.reimbursementGroup.parse({ currentVersion: 4, items: [item] }).items,
    ).toHaveLength(1);
  });

  it('when the alternative envelope is well formed, then it validates', () => {
    const env = {
      currentVersion: 4,
      entries: [{ data: { id: 'x', name: 'y', extra: true }, isDeleted: true }],
    };
    expect(altEnvelopeSchemas.treatmentGroup.parse(env)).toEqual(env);
  });

  it.each([
    ['envelope', { currentVersion: 4, items: [item], next: null }],
    ['item entry', { currentVersion: 4, items: [{ ...item, etag: 'x' }] }],
    ['envelope using the other spelling', { currentVersion: 4, entries: [] }],
  ])('when the %s has an unknown property, then the primary envelope rejects it', (_case, env) => {
    expect(envelopeSchemas.reimbursementGroup.safeParse(env).success).toBe(false);
  });

  it('when an alternative entry carries primary-only fields, then it is rejected', () => {
    const env = {
      currentVersion: 4,
      entries: [{ data: { id: 'x', name: 'y' }, isDeleted: false, version: 4 }],
    };
    expect(altEnvelopeSchemas.treatmentGroup.safeParse(env).success).toBe(false);
  });

  it.each([
    ['negative currentVersion', { currentVersion: -1, items: [] }],
    ['fractional currentVersion', { currentVersion: 1.5, items: [] }],
    ['version 0 on an item', { currentVersion: 4, items: [{ ...item, version: 0 }] }],
    [
      'lastChanged not ISO 8601',
      { currentVersion: 4, items: [{ ...item, lastChanged: '22.11.2026' }] },
    ],
  ])('when %s, then it is rejected', (_case, env) => {
    expect(envelopeSchemas.reimbursementGroup.safeParse(env).success).toBe(false);
  });

  it('when a factory is called twice with one data schema, then it returns the same schema', () => {
    expect(envelopeSchema(reimbursementGroupDataSchema)).toBe(envelopeSchemas.reimbursementGroup);
    expect(altEnvelopeSchema(itemDataSchemas.treatmentGroup)).toBe(
      altEnvelopeSchemas.treatmentGroup,
    );
  });

  it('when both spellings and all contracts go into one JSON Schema, then each has its own named component', () => {
    const doc = z.toJSONSchema(
      z.object({
        a: envelopeSchemas.treatmentGroup,
        b: envelopeSchemas.reimbursementGroup,
        c: altEnvelopeSchemas.treatmentGroup,
        d: altEnvelopeSchemas.reimbursementGroup,
        e: problemDetailsSchema,
        f: syncCompletedEventDataSchema,
      }),
    ) as { $defs: Record<string, { additionalProperties?: unknown }> };
    expect(Object.keys(doc.$defs)).toEqual(
      expect.arrayContaining([
        'TreatmentGroupEnvelope',
        'TreatmentGroupItem',
        'TreatmentGroupAltEnvelope',
        'TreatmentGroupAltEntry',
        'ReimbursementGroupEnvelope',
        'ReimbursementGroupAltEnvelope',
        'ReimbursementGroup',
        'TreatmentGroup',
        'CodedConcept',
        'MedicineReference',
        'ProblemDetails',
        'SyncCompletedEventData',
      ]),
    );
    expect(doc.$defs.ReimbursementGroup.additionalProperties).toBe(false);
    expect(doc.$defs.TreatmentGroup.additionalProperties).toEqual({});
  });
});

describe('problem details', () => {
  it('when an error body carries extension members, then they are kept', () => {
    const body = {
      type: 'https://nhp.example/problems/invalid-query',
      title: 'Bad Request',
      status: 400,
      detail: 'sinceVersion must be a base-10 integer',
      instance: '/api/v1/treatmentGroup',
      code: 'INVALID_SINCE_VERSION',
      errors: [{ path: 'query.sinceVersion', message: 'not an integer' }],
      requestId: 'abc',
    };
    expect(problemDetailsSchema.parse(body)).toEqual(body);
  });

  it('when status is not an HTTP status, then it is rejected', () => {
    expect(
      problemDetailsSchema.safeParse({
        type: 'about:blank',
        title: 'x',
        status: 42,
        detail: '',
        instance: '/',
      }).success,
    ).toBe(false);
  });
});

describe('sync-completed event data', () => {
  it('when a committing run reports its counts, then it validates', () => {
    expect(syncCompletedEventDataSchema.parse(event())).toEqual(event());
  });

  it('when a no-change run keeps the version with zero counts, then it validates', () => {
    expect(
      syncCompletedEventDataSchema.safeParse(
        event({
          changed: false,
          currentVersion: 3,
          datasets: { treatmentGroup: counts, reimbursementGroup: counts },
        }),
      ).success,
    ).toBe(true);
  });

  it('when a changed run skips a version, then currentVersion is rejected', () => {
    const result = syncCompletedEventDataSchema.safeParse(event({ currentVersion: 5 }));
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['currentVersion']);
  });

  it('when a no-change run reports changed items, then the dataset counts are rejected', () => {
    const result = syncCompletedEventDataSchema.safeParse(
      event({ changed: false, currentVersion: 3 }),
    );
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['datasets.treatmentGroup']);
  });

  it.each([
    [
      'negative count',
      { datasets: { treatmentGroup: { ...counts, added: -1 }, reimbursementGroup: counts } },
    ],
    ['missing dataset', { datasets: { treatmentGroup: counts } }],
    ['non-ISO time', { completedAt: 'yesterday' }],
    ['empty runId', { runId: '' }],
  ])('when %s, then it is rejected', (_case, over) => {
    expect(
      syncCompletedEventDataSchema.safeParse(event(over as Partial<SyncCompletedEventData>))
        .success,
    ).toBe(false);
  });

  it('when a later producer adds a field, then consumers still accept the event', () => {
    expect(syncCompletedEventDataSchema.safeParse({ ...event(), durationMs: 10 }).success).toBe(
      true,
    );
  });

  it('when ids are built, then a commit id depends on the version only and a no-change id on the run too', () => {
    expect(syncCompletedEventId(7)).toBe('refsync-sync-completed-7');
    expect(syncCompletedEventId(7, 'r1')).toBe('refsync-sync-completed-7-unchanged-r1');
  });
});
