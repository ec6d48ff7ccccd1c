import {
  ROOT_CONTEXT,
  SamplingDecision,
  SpanKind,
  TraceFlags,
  trace,
  type Context,
} from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import {
  DecidedSampler,
  hex8,
  ReusableIdGenerator,
  RootSampling,
  rootBoundFromEnv,
  samplerFromEnv,
  type RootDecision,
} from '../src/root-sampling';
import { inMemoryTracer } from './support';

const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

describe('samplerFromEnv', () => {
  it.each([
    [{}, 'ParentBased{root=AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: 'always_on' }, 'AlwaysOnSampler'],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }, 'AlwaysOffSampler'],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }, 'ParentBased{root=AlwaysOffSampler'],
    [
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' },
      'TraceIdRatioBased{0.25}',
    ],
    [
      { OTEL_TRACES_SAMPLER: ' ParentBased_TraceIdRatio ', OTEL_TRACES_SAMPLER_ARG: '0.1' },
      'ParentBased{root=TraceIdRatioBased{0.1}',
    ],
    // As the SDK reads the ratio: blank, not a number or out of range means 1.
    [{ OTEL_TRACES_SAMPLER: 'traceidratio' }, 'TraceIdRatioBased{1}'],
    [
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' },
      'TraceIdRatioBased{1}',
    ],
    [
      { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' },
      'TraceIdRatioBased{1}',
    ],
  ])('when the environment is %j, then the sampler is %s', (env, expected) => {
    expect(samplerFromEnv(env)?.toString()).toContain(expected);
  });

  it('when the environment names a sampler outside the specification’s built-ins, then none is made (the SDK decides alone)', () => {
    expect(samplerFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toBeUndefined();
  });
});

describe('rootBoundFromEnv', () => {
  /** RootSampling as startTracing builds it from `env`, and its sampler's own decision. */
  function fromEnv(env: NodeJS.ProcessEnv) {
    const sampler = samplerFromEnv(env) as Sampler;
    const roots = new RootSampling(sampler, new ReusableIdGenerator(), rootBoundFromEnv(env));
    return {
      decide: (parent: Context = ROOT_CONTEXT) =>
        roots.decide('POST', SpanKind.SERVER, () => ({}), parent),
      samplersOwn: (traceId: string) =>
        sampler.shouldSample(ROOT_CONTEXT, traceId, 'POST', SpanKind.SERVER, {}, []).decision !==
        SamplingDecision.NOT_RECORD,
    };
  }

  /** Runs `fn` with Math.random drawing these 32-bit words in turn (as fractions of 2^32). */
  function withWords<R>(words: number[], fn: () => R): R {
    const draws = words.map((w) => w / 2 ** 32);
    const random = jest.spyOn(Math, 'random').mockImplementation(() => draws.shift() ?? 0);
    try {
      return fn();
    } finally {
      random.mockRestore();
    }
  }

  it.each([
    [{}],
    [{ OTEL_TRACES_SAMPLER: 'always_on' }],
    [{ OTEL_TRACES_SAMPLER: 'always_off' }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_always_off' }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }],
    [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }],
    [{ OTEL_TRACES_SAMPLER: 'ParentBased_TraceIdRatio', OTEL_TRACES_SAMPLER_ARG: '1' }],
    [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }],
  ])(
    'when the environment is %j, then every root decided on the bound is the sampler’s own decision on its trace id',
    (env) => {
      const { decide, samplersOwn } = fromEnv(env);
      const traceIds = new Set<string>();
      for (let i = 0; i < 1000; i++) {
        const decision = decide();
        expect(decision.traceId).toMatch(HEX32);
        traceIds.add(decision.traceId);
        expect(decision.recorded).toBe(samplersOwn(decision.traceId));
        expect(decision.traceState).toBeUndefined();
      }
      expect(traceIds.size).toBe(1000);
    },
  );

  it('when the ratio is 0.1, then about a tenth of the roots are sampled', () => {
    const { decide } = fromEnv({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.1',
    });
    let sampled = 0;
    for (let i = 0; i < 20_000; i++) if (decide().recorded) sampled++;
    // 2000 expected; the binomial's standard deviation is 42.
    expect(sampled).toBeGreaterThan(1750);
    expect(sampled).toBeLessThan(2250);
  });

  it.each([
    ['just below the bound', [0x3ffffffe, 0, 0, 0]],
    ['at the bound', [0x3fffffff, 0, 0, 0]],
    ['with words of 2^31 and more', [0xc0000000, 0xffffffff, 0x80000001, 0x7fffffff]],
  ])(
    'when the trace id’s words XOR to a value %s, then the decision is the ratio sampler’s',
    (_, words) => {
      // floor(0.25 * 0xffffffff) = 0x3fffffff
      const { decide, samplersOwn } = fromEnv({
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      });
      const decision = withWords(words as number[], () => decide());
      expect(decision.traceId).toBe(
        (words as number[]).map((w) => w.toString(16).padStart(8, '0')).join(''),
      );
      expect(decision.recorded).toBe(samplersOwn(decision.traceId));
    },
  );

  it('when the random draw is all zeros, then the trace id is still valid, as the SDK makes it (last byte 1)', () => {
    const { decide, samplersOwn } = fromEnv({
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.5',
    });
    const decision = withWords([0, 0, 0, 0], () => decide());
    expect(decision.traceId).toBe('00000000000000000000000000000001');
    expect(decision.recorded).toBe(samplersOwn(decision.traceId));
  });

  it('when the context passed holds a span, then the parent-based sampler decides, not the bound', () => {
    const { decide } = fromEnv({
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    expect(decide(parent).recorded).toBe(true);
    expect(decide().recorded).toBe(false);
  });

  it('when the sampler is not a built-in one, then there is no bound (the sampler is asked)', () => {
    expect(rootBoundFromEnv({ OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toBeUndefined();
  });
});

describe('ReusableIdGenerator', () => {
  it('when a trace id is chosen, then the next root gets it once and random ones after', () => {
    const ids = new ReusableIdGenerator();
    ids.reuseTraceId('0af7651916cd43dd8448eb211c80319c');
    expect(ids.generateTraceId()).toBe('0af7651916cd43dd8448eb211c80319c');
    const next = ids.generateTraceId();
    expect(next).toMatch(HEX32);
    expect(next).not.toBe('0af7651916cd43dd8448eb211c80319c');
    expect(ids.generateSpanId()).toMatch(HEX16);
  });

  it('when Math.random draws given words, then the ids are those words in hex, as the SDK writes them', () => {
    const words = [0x0af76519, 0x16cd43dd, 0x8448eb21, 0x1c80319c, 0xb7ad6b71, 0x69203331];
    const draws = jest.spyOn(Math, 'random');
    for (const word of words) draws.mockReturnValueOnce(word / 2 ** 32);
    try {
      const ids = new ReusableIdGenerator();
      expect(ids.generateTraceId()).toBe('0af7651916cd43dd8448eb211c80319c');
      expect(ids.generateSpanId()).toBe('b7ad6b7169203331');
    } finally {
      draws.mockRestore();
    }
  });

  it('when every word drawn is zero, then the ids end in 1 (never the invalid all-zero id)', () => {
    const draws = jest.spyOn(Math, 'random').mockReturnValue(0);
    try {
      const ids = new ReusableIdGenerator();
      expect(ids.generateTraceId()).toBe(`${'0'.repeat(31)}1`);
      expect(ids.generateSpanId()).toBe(`${'0'.repeat(15)}1`);
    } finally {
      draws.mockRestore();
    }
  });
});

describe('hex8', () => {
  it.each([0, 1, 0xff, 0x100, 0x7fffffff, 0x80000000, 0xffffffff, -1, -0x80000000, 0x0af76519])(
    'when the word is %i, then it is written as toString(16) writes it, eight digits',
    (word) => {
      expect(hex8(word)).toBe((word >>> 0).toString(16).padStart(8, '0'));
    },
  );

  it('when words are random, then each is written as toString(16) writes it', () => {
    for (let i = 0; i < 1000; i++) {
      const word = (Math.random() * 2 ** 32) | 0;
      expect(hex8(word)).toBe((word >>> 0).toString(16).padStart(8, '0'));
    }
  });
});

describe('DecidedSampler', () => {
  it('when a decision is given, then the next call gets it without asking the sampler, and the one after asks', () => {
    const inner = new TraceIdRatioBasedSampler(0);
    const asked = jest.spyOn(inner, 'shouldSample');
    const sampler = new DecidedSampler(inner);
    const ask = () =>
      sampler.shouldSample(
        ROOT_CONTEXT,
        '0af7651916cd43dd8448eb211c80319c',
        'POST',
        SpanKind.SERVER,
        {},
        [],
      ).decision;
    sampler.decideNext({ decision: SamplingDecision.RECORD_AND_SAMPLED });
    expect(ask()).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(asked).not.toHaveBeenCalled();
    expect(ask()).toBe(SamplingDecision.NOT_RECORD);
    expect(asked).toHaveBeenCalledTimes(1);
    expect(sampler.toString()).toBe(inner.toString());
  });
});

describe('RootSampling', () => {
  /** A tracer sampling with `sampler`, and RootSampling over the same instances (`bound`: its rule). */
  function setUp(sampler: Sampler, bound?: number) {
    const ids = new ReusableIdGenerator();
    const { exporter, tracer } = inMemoryTracer(sampler, ids);
    const roots = new RootSampling(sampler, ids, bound);
    const decide = () => roots.decide('POST', SpanKind.SERVER, () => attributes, ROOT_CONTEXT);
    const recorded = (decision: RootDecision) =>
      roots.recordedSpan(tracer, decision, 'POST', SpanKind.SERVER, attributes, ROOT_CONTEXT);
    // As the request wrapper does: decide, then the span the decision calls for.
    const startRoot = () => {
      const decision = decide();
      return decision.recorded ? recorded(decision) : roots.unrecordedSpan(decision);
    };
    return { roots, tracer, startRoot, exporter, decide, recorded };
  }
  const attributes = { 'http.request.method': 'POST' };

  it('when the sampler does not sample a root, then the span records nothing and still names a new trace, unsampled', () => {
    const { startRoot, exporter } = setUp(new AlwaysOffSampler());
    const span = startRoot();
    span.end();
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toMatch(HEX32);
    expect(span.spanContext().spanId).toMatch(HEX16);
    expect(span.spanContext().traceFlags).toBe(TraceFlags.NONE);
    expect(trace.isSpanContextValid(span.spanContext())).toBe(true);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('when roots are sampled by ratio, then each decision is the ratio sampler’s on the span’s own trace id, and a sampled root is the tracer’s span', () => {
    const sampler = new TraceIdRatioBasedSampler(0.5);
    const { startRoot, exporter } = setUp(sampler);
    const traceIds = new Set<string>();
    let sampled = 0;
    for (let i = 0; i < 200; i++) {
      const span = startRoot();
      span.end();
      const { traceId, traceFlags } = span.spanContext();
      traceIds.add(traceId);
      const expected = sampler.shouldSample(ROOT_CONTEXT, traceId).decision;
      expect(span.isRecording() || traceFlags === TraceFlags.SAMPLED).toBe(
        expected === SamplingDecision.RECORD_AND_SAMPLED,
      );
      if (traceFlags === TraceFlags.SAMPLED) sampled++;
    }
    // Every root its own trace (a chosen trace id is used once), some sampled and some not.
    expect(traceIds.size).toBe(200);
    expect(sampled).toBeGreaterThan(0);
    expect(sampled).toBeLessThan(200);
    const recorded = exporter.getFinishedSpans();
    expect(recorded).toHaveLength(sampled);
    expect(
      recorded.every(
        (s) => s.kind === SpanKind.SERVER && s.attributes['http.request.method'] === 'POST',
      ),
    ).toBe(true);
  });

  it('when a root is sampled, then the tracer’s span carries the trace id the decision was taken on', () => {
    const { decide, recorded } = setUp(new AlwaysOnSampler());
    const decision = decide();
    const span = recorded(decision);
    span.end();
    expect(decision.recorded).toBe(true);
    expect(span.spanContext().traceId).toBe(decision.traceId);
  });

  it('when the tracer samples through a DecidedSampler, then a sampled root is not asked of the sampler twice, and other spans are', () => {
    const env = { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '1' };
    const inner = samplerFromEnv(env) as Sampler;
    const asked = jest.spyOn(inner, 'shouldSample');
    const { tracer, exporter, decide, recorded } = setUp(
      new DecidedSampler(inner),
      rootBoundFromEnv(env),
    );
    const decision = decide();
    const root = recorded(decision);
    expect(asked).not.toHaveBeenCalled();
    const child = tracer.startSpan('find', {}, trace.setSpan(ROOT_CONTEXT, root));
    expect(asked).toHaveBeenCalledTimes(1);
    child.end();
    root.end();
    expect(exporter.getFinishedSpans().map((s) => s.spanContext().traceId)).toEqual([
      decision.traceId,
      decision.traceId,
    ]);
    expect(root.spanContext().traceFlags & TraceFlags.SAMPLED).toBe(TraceFlags.SAMPLED);
  });
});
