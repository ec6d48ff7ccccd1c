import {
  SpanStatusCode,
  type Attributes,
  type Context,
  type SpanKind,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { RootDecision, RootSampling } from './root-sampling';

/** A span that has ended, recorded for the tracer to make later (see DeferredSpans). */
export interface SpanRecord {
  name: string;
  kind: SpanKind;
  attributes: Attributes;
  /** The context it is a child of (a parent span, or none for a root). */
  parent: Context;
  /** `performance.now()` when it started and when it ended. */
  startTime: number;
  endTime: number;
  /** A root's decision (its trace id) and the span id its children already name. */
  root?: { decision: RootDecision; spanId: string };
  /** `error.type` of a failed span (its status is then ERROR). */
  error?: string;
}

/** Records made into spans together at most this often... */
const FLUSH_INTERVAL_MS = 100;
/** ...or once this many wait. */
const FLUSH_AT = 64;

/**
 * Spans of the hot paths (a sampled request's own span, the span of its share of a coalesced
 * read), recorded when they end and made by the tracer a batch at a time.
 *
 * Why: the SDK's span code runs only for the sampled tenth of the requests, and between two of
 * them the rest of the service has pushed it out of the CPU's caches. Measured inside privacy-api
 * under the status-check bench, the tracer's `startSpan` took a median 9.5 us with 10% sampled
 * and 2.4 us with every request sampled, ending a span 2.1 and 0.7 us (tools/bench/README.md).
 * Made one after another, the spans of a batch pay that once.
 *
 * What a recorded span gives up: nothing of what is exported (the same name, kind, attributes,
 * status, parent, start and end: the tracer is given the times and, for a root, the trace id, the
 * span id and the sampling decision it was recorded with), only when the span processors see it
 * (at most FLUSH_INTERVAL_MS later, then exported as any span; `flush` makes the waiting ones at
 * once, as shutdown does). While a recorded root runs, its context holds a non-recording span with
 * the same ids and the sampled flag, so children, log lines and propagated headers name it as
 * before.
 */
export class DeferredSpans {
  private waiting: SpanRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** After close: each record is made at once. */
  private closed = false;

  /**
   * @param roots how roots are decided (startTracing's RootSampling): a recorded root is made
   *   through it, on the ids and decision it ran with. Without it (a sampler that is not one of the
   *   specification's), no root is recorded, only children.
   */
  constructor(
    private readonly tracer: Tracer,
    private readonly roots: RootSampling | undefined,
  ) {}

  /** Queues an ended span; the first of a batch schedules the batch. */
  add(record: SpanRecord): void {
    if (this.closed) {
      this.make(record);
      return;
    }
    this.waiting.push(record);
    if (this.waiting.length >= FLUSH_AT) this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_INTERVAL_MS);
      // Never what keeps a process alive: shutdown flushes.
      this.timer.unref();
    }
  }

  /** Makes every waiting record into a span now. */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const due = this.waiting;
    this.waiting = [];
    for (const record of due) this.make(record);
  }

  /** Flushes, and makes every later record at once (the SDK is shutting down). */
  close(): void {
    this.closed = true;
    this.flush();
  }

  private make(record: SpanRecord): void {
    const { name, kind, attributes, parent, startTime, root } = record;
    const span =
      root && this.roots
        ? this.roots.recordedSpan(this.tracer, root.decision, name, kind, attributes, parent, {
            startTime,
            spanId: root.spanId,
          })
        : this.tracer.startSpan(name, { kind, attributes, startTime }, parent);
    if (record.error !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, record.error);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(record.endTime);
  }
}
