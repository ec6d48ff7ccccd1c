import {
  SamplingDecision,
  SpanKind,
  TraceFlags,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TraceState,
  type Tracer,
} from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type IdGenerator,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-base';

/** Two hex digits per byte value: ids are written out from their 32-bit words with it. */
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A 32-bit word as 8 hex digits. Hand-written rather than `toString(16)`: V8 writes a number in
 * another radix through its general double-to-string routine, which was most of what a sampled
 * request's ids cost (tools/bench/README.md, privacy-api).
 */
export function hex8(word: number): string {
  return (
    (HEX_BYTES[(word >>> 24) & 0xff] as string) +
    (HEX_BYTES[(word >>> 16) & 0xff] as string) +
    (HEX_BYTES[(word >>> 8) & 0xff] as string) +
    (HEX_BYTES[word & 0xff] as string)
  );
}

/** A random 32-bit word, drawn as the SDK's RandomIdGenerator draws its ids (as an int32). */
const randomWord = () => (Math.random() * 2 ** 32) | 0;

/**
 * An id of `words` random 32-bit words in hex, drawn as the SDK's RandomIdGenerator draws them:
 * never all zeros (an invalid id); the last byte is then 1.
 */
function randomHexId(words: number): string {
  let id = '';
  let any = 0;
  for (let i = 1; i < words; i++) {
    const word = randomWord();
    any |= word;
    id += hex8(word);
  }
  let last = randomWord();
  if ((any | last) === 0) last = 1;
  return id + hex8(last);
}

/**
 * The SDK's random ids, drawn as its RandomIdGenerator draws them (32-bit words from Math.random,
 * never all zeros: the last byte is then 1) and written out in hex from a table instead of through
 * a shared Buffer's `toString('hex')` (a call into C++ per id, which a sampled request pays for
 * each of its spans). One twist: a root span's trace id can be chosen beforehand (see
 * RootSampling.recordedSpan), so that the span the tracer makes has the trace id its sampling
 * decision was taken on, and so can a span's own id (a span made after it ended, DeferredSpans,
 * whose children already name it).
 */
export class ReusableIdGenerator implements IdGenerator {
  private next: string | undefined;
  private nextSpanId: string | undefined;

  generateTraceId(): string {
    const chosen = this.next;
    this.next = undefined;
    return chosen ?? randomHexId(4);
  }

  generateSpanId(): string {
    const chosen = this.nextSpanId;
    this.nextSpanId = undefined;
    return chosen ?? randomHexId(2);
  }

  /** The trace id of the next root span (undefined: a new random one, as ever). */
  reuseTraceId(traceId: string | undefined): void {
    this.next = traceId;
  }

  /** The id of the next span (undefined: a new random one): a span made after it ended. */
  reuseSpanId(spanId: string | undefined): void {
    this.nextSpanId = spanId;
  }
}

/**
 * The sampler the SDK is given: the sampler the environment names, except that the tracer's call
 * for a root RootSampling has just decided gets that decision back (RootSampling.recordedSpan)
 * instead of the same question asked again (for the ratio sampler, the trace id parsed from hex
 * once more). Every other call is the sampler's.
 */
export class DecidedSampler implements Sampler {
  private next: SamplingResult | undefined;

  constructor(readonly sampler: Sampler) {}

  shouldSample(
    context: Context,
    traceId: string,
    spanName: string,
    spanKind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    const decided = this.next;
    if (decided !== undefined) {
      this.next = undefined;
      return decided;
    }
    return this.sampler.shouldSample(context, traceId, spanName, spanKind, attributes, links);
  }

  /** The answer to the next call (undefined: the sampler answers, as ever). */
  decideNext(result: SamplingResult | undefined): void {
    this.next = result;
  }

  toString(): string {
    return this.sampler.toString();
  }
}

/** The ratio OTEL_TRACES_SAMPLER_ARG gives, as the SDK reads it (1 when blank or out of range). */
function ratioFrom(value: string | undefined): number {
  const ratio = value === undefined || value.trim() === '' ? NaN : Number(value);
  return Number.isFinite(ratio) && ratio >= 0 && ratio <= 1 ? ratio : 1;
}

/** The sampler OTEL_TRACES_SAMPLER names (unset: parent-based, always on), as the SDK reads it. */
function samplerName(env: NodeJS.ProcessEnv): string {
  return env['OTEL_TRACES_SAMPLER']?.trim().toLowerCase() || 'parentbased_always_on';
}

/**
 * The sampler OTEL_TRACES_SAMPLER names, built as the SDK builds it (unset: parent-based, always
 * on), when it is one of the specification's built-in samplers. Undefined for any other name
 * (jaeger_remote, a typo): the SDK then decides alone, as it would without this module.
 * Written here because sdk-node's own (createSamplerFromEnv) is not exported, and the request
 * wrapper must hold the very instance the SDK samples with.
 */
export function samplerFromEnv(env: NodeJS.ProcessEnv): Sampler | undefined {
  const ratio = () => new TraceIdRatioBasedSampler(ratioFrom(env['OTEL_TRACES_SAMPLER_ARG']));
  switch (samplerName(env)) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
    default:
      return undefined;
  }
}

/**
 * How the sampler samplerFromEnv makes decides a root, as a bound: a root is sampled when the XOR
 * of its trace id's four 32-bit words is below it. That is TraceIdRatioBasedSampler's rule, with
 * its bound (`floor(ratio * 0xffffffff)`, 2^32 for a ratio of 1); always-on is 2^32 and always-off
 * 0, whatever the trace id. The parent-based samplers decide a root (no parent span) with their
 * root sampler, which is one of these. Undefined when the sampler is not a built-in one.
 */
export function rootBoundFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  switch (samplerName(env)) {
    case 'always_on':
    case 'parentbased_always_on':
      return 2 ** 32;
    case 'always_off':
    case 'parentbased_always_off':
      return 0;
    case 'traceidratio':
    case 'parentbased_traceidratio': {
      const ratio = ratioFrom(env['OTEL_TRACES_SAMPLER_ARG']);
      return ratio === 1 ? 2 ** 32 : Math.floor(ratio * 0xffffffff);
    }
    default:
      return undefined;
  }
}

/** A new root's sampling decision: the trace id it was taken on, and the sampler's answer. */
export interface RootDecision {
  readonly traceId: string;
  /** Whether the tracer must make the span (sampled, or recorded without being sampled). */
  readonly recorded: boolean;
  readonly traceState: TraceState | undefined;
  /** The sampler's answer, which the tracer gets back when it makes a recorded root's span. */
  readonly result: SamplingResult;
}

/** What the built-in samplers answer for a root they sample (and for one they do not). */
const SAMPLED: SamplingResult = Object.freeze({ decision: SamplingDecision.RECORD_AND_SAMPLED });
const NOT_RECORDED: SamplingResult = Object.freeze({ decision: SamplingDecision.NOT_RECORD });

/**
 * A decision taken on a trace id held as four 32-bit words (RootSampling's bound), written out in
 * hex only when something asks for it: an unsampled status check on the fast path never does.
 */
class WordsDecision implements RootDecision {
  private hex: string | undefined;
  readonly traceState = undefined;
  constructor(
    private readonly w0: number,
    private readonly w1: number,
    private readonly w2: number,
    private readonly w3: number,
    readonly recorded: boolean,
  ) {}

  get traceId(): string {
    return (this.hex ??= hex8(this.w0) + hex8(this.w1) + hex8(this.w2) + hex8(this.w3));
  }

  get result(): SamplingResult {
    return this.recorded ? SAMPLED : NOT_RECORDED;
  }
}

/**
 * A request that continues no caller's trace is a root: most are not sampled, and for those the
 * tracer's startSpan did much more than the decision needs (attributes sanitised, span limits and
 * its own metrics consulted, the parent looked up again): about 2 us of a status check's 70, the
 * largest part of what tracing cost a request that records nothing (tools/bench/README.md,
 * privacy-api). The decision is taken here instead, by the same sampler instance the tracer uses
 * (the specification's samplers decide on the trace id, the kind, the name and the attributes
 * alone, so asking it first changes nothing). Not sampled: the span is the API's non-recording
 * span with a fresh span id, exactly what the tracer returns then (made when something needs it:
 * see traceHttpRequests). Sampled: the tracer makes the span, with the trace id the decision was
 * taken on and, when the SDK samples through a DecidedSampler (startTracing), that decision.
 */
export class RootSampling {
  /**
   * @param sampler the instance the SDK samples with (a DecidedSampler: the tracer then gets this
   *   decision back instead of asking again).
   * @param rootBound the sampler's rule for a root (rootBoundFromEnv), when it has one: the
   *   decision is then taken on the trace id's words, before the id is even written out in hex,
   *   which is the same answer as the sampler's (the tests compare them) for a tenth of the work
   *   (about 0.9 us against 0.05 a request). Without it, the sampler itself is asked.
   */
  constructor(
    private readonly sampler: Sampler,
    private readonly ids: ReusableIdGenerator,
    private readonly rootBound?: number,
  ) {}

  /**
   * Decides a root, a span whose `parent` context holds no span (it may hold baggage).
   * `attributes` are asked for only when the sampler itself is asked (no bound): a decision on
   * the words needs none, and most roots are never recorded.
   */
  decide(
    name: string,
    kind: SpanKind,
    attributes: () => Attributes,
    parent: Context,
  ): RootDecision {
    const bound = this.rootBound;
    if (bound !== undefined && trace.getSpanContext(parent) === undefined) {
      const w0 = randomWord();
      const w1 = randomWord();
      const w2 = randomWord();
      let w3 = randomWord();
      // As the SDK's ids: never all zeros (an invalid trace id); the last byte is then 1.
      if ((w0 | w1 | w2 | w3) === 0) w3 = 1;
      return new WordsDecision(w0, w1, w2, w3, (w0 ^ w1 ^ w2 ^ w3) >>> 0 < bound);
    }
    const traceId = this.ids.generateTraceId();
    const result = this.sampler.shouldSample(parent, traceId, name, kind, attributes(), []);
    return {
      traceId,
      recorded: result.decision !== SamplingDecision.NOT_RECORD,
      traceState: result.traceState,
      result,
    };
  }

  /**
   * The span a recorded root's context holds while the root runs, when its span is made after it
   * ends (DeferredSpans): a non-recording span with the root's ids and the sampled flag, which is
   * what children, log lines and propagated headers read of it.
   */
  sampledSpan(decision: RootDecision, spanId: string): Span {
    return trace.wrapSpanContext({
      traceId: decision.traceId,
      spanId,
      traceFlags: TraceFlags.SAMPLED,
      ...(decision.traceState ? { traceState: decision.traceState } : {}),
    });
  }

  /** A new span id, as the tracer would draw it. */
  spanId(): string {
    return this.ids.generateSpanId();
  }

  /** The span of a root the sampler did not record: the API's non-recording span. */
  unrecordedSpan(decision: RootDecision): Span {
    return trace.wrapSpanContext({
      traceId: decision.traceId,
      spanId: this.ids.generateSpanId(),
      traceFlags: TraceFlags.NONE,
      ...(decision.traceState ? { traceState: decision.traceState } : {}),
    });
  }

  /**
   * The tracer's span for a root the sampler records, on the trace id it was decided on. For a
   * root made after it ended (DeferredSpans): `startTime` (a `performance.now()`) and the `spanId`
   * its children already name.
   */
  recordedSpan(
    tracer: Tracer,
    decision: RootDecision,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    parent: Context,
    ended: { startTime: number; spanId: string } | undefined = undefined,
  ): Span {
    const decided = this.sampler instanceof DecidedSampler ? this.sampler : undefined;
    this.ids.reuseTraceId(decision.traceId);
    this.ids.reuseSpanId(ended?.spanId);
    decided?.decideNext(decision.result);
    try {
      return tracer.startSpan(
        name,
        ended ? { kind, attributes, startTime: ended.startTime } : { kind, attributes },
        parent,
      );
    } finally {
      // Whatever startSpan did, the next root span gets new ids and a decision of its own.
      this.ids.reuseTraceId(undefined);
      this.ids.reuseSpanId(undefined);
      decided?.decideNext(undefined);
    }
  }
}
