// The package ships no types; the declaration must reach every project whose tests import this
// file, which a reference does and an import of a .d.ts cannot.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./parse-prometheus-text-format.d.ts" />
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

type Family = ReturnType<typeof parsePrometheusTextFormat>[number];
type Sample = Family['metrics'][number];

/** A histogram series as scraped: its count, its sum and its cumulative buckets by bound. */
export interface ScrapedHistogram {
  count: number;
  sum: number;
  buckets: Record<string, number>;
}

/**
 * A /metrics body parsed with a Prometheus text-format parser (parse-prometheus-text-format), so
 * that tests read what Prometheus would read, not lines matched by hand. Parsing throws on a body
 * Prometheus could not read either.
 *
 * The parser merges every series of a labelled histogram into one (its labels lost), so
 * histograms are handed to it as untyped: it then reads their `_bucket`, `_sum` and `_count`
 * samples as families of their own, which `histogram()` puts together again.
 */
export class Scrape {
  private readonly families = new Map<string, Family>();
  private readonly histograms = new Set<string>();

  constructor(readonly text: string) {
    const untyped = text.replace(/^# TYPE (\S+) histogram$/gm, (_line, name: string) => {
      this.histograms.add(name);
      return `# TYPE ${name} untyped`;
    });
    // Series of one name interleaved with another come out as several families: merged here.
    for (const family of parsePrometheusTextFormat(untyped)) {
      const known = this.families.get(family.name);
      if (known) known.metrics.push(...family.metrics);
      else this.families.set(family.name, family);
    }
    for (const name of this.histograms) {
      const family = this.families.get(name);
      if (family) family.type = 'HISTOGRAM';
    }
  }

  /** The metric family, or undefined when the body has none of that name. */
  family(name: string): Family | undefined {
    return this.families.get(name);
  }

  names(): string[] {
    return [...this.families.keys()];
  }

  /** Every label set of a family (e.g. to check that no label value is a raw URL). */
  labelSets(name: string): Array<Record<string, string>> {
    return (this.families.get(name)?.metrics ?? []).map((m) => m.labels ?? {});
  }

  private find(name: string, labels: Record<string, string>): Sample | undefined {
    const family = this.families.get(name);
    return family?.metrics.find((m) =>
      Object.entries(labels).every(([key, value]) => m.labels?.[key] === value),
    );
  }

  /**
   * The value of the counter or gauge sample whose labels include `labels` (the first that
   * matches); undefined when there is none.
   */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const sample = this.find(name, labels);
    return sample?.value === undefined ? undefined : Number(sample.value);
  }

  /** The sum of every sample of a counter or gauge whose labels include `labels` (0 if none). */
  sum(name: string, labels: Record<string, string> = {}): number {
    const family = this.families.get(name);
    return (family?.metrics ?? [])
      .filter((m) => Object.entries(labels).every(([key, value]) => m.labels?.[key] === value))
      .reduce((total, m) => total + Number(m.value ?? 0), 0);
  }

  /** A histogram series whose labels include `labels`; undefined when there is none. */
  histogram(name: string, labels: Record<string, string> = {}): ScrapedHistogram | undefined {
    const count = this.find(`${name}_count`, labels);
    if (count?.value === undefined) return undefined;
    // The series' own labels, so that the buckets of a series that merely includes `labels`
    // are not mixed with another's.
    const own = count.labels ?? {};
    const buckets: Record<string, number> = {};
    for (const sample of this.families.get(`${name}_bucket`)?.metrics ?? []) {
      const { le, ...rest } = sample.labels ?? {};
      if (le === undefined || sample.value === undefined) continue;
      const keys = Object.keys(rest);
      if (keys.length === Object.keys(own).length && keys.every((k) => rest[k] === own[k])) {
        buckets[le] = Number(sample.value);
      }
    }
    return {
      count: Number(count.value),
      sum: Number(this.find(`${name}_sum`, own)?.value),
      buckets,
    };
  }
}

/** Fetches and parses an app's /metrics (`base` is the app's URL, e.g. http://127.0.0.1:3001). */
export async function scrapeMetrics(base: string): Promise<Scrape> {
  const res = await fetch(`${base}/metrics`);
  if (res.status !== 200) throw new Error(`GET ${base}/metrics answered ${res.status}`);
  return new Scrape(await res.text());
}
