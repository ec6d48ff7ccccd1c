import { createHash } from 'node:crypto';
import type { Dataset } from '@nhp/refsync-contracts';
import type {
  CommittedItemRef,
  OutboxEvent,
  StagedChange,
  SyncStore,
  UpstreamSource,
} from '../src';

interface Row {
  itemId: string;
  hash: string;
  sourceHash?: string;
  isDeleted: boolean;
  data: unknown;
  version: number;
}

/**
 * An in-memory SyncStore with the write protocol's observable behaviour (staged rows invisible
 * until the commit, commit guarded by the expected version), for testing the use case's rules.
 * The real adapter is tested against MongoDB in the importer's tests.
 */
export class MemoryStore implements SyncStore {
  version = 0;
  readonly committed: Record<Dataset, Map<string, Row>> = {
    treatmentGroup: new Map(),
    reimbursementGroup: new Map(),
  };
  staged: Array<{ dataset: Dataset; version: number; change: StagedChange }> = [];
  outbox: OutboxEvent[] = [];
  stageCalls: number[] = [];
  failCommit = false;

  async recover() {
    const removed = this.staged.length;
    this.staged = [];
    return { removed, restored: 0 };
  }
  async readState() {
    return { version: this.version, committedAt: null };
  }
  async *committedRefs(dataset: Dataset): AsyncIterable<CommittedItemRef> {
    for (const row of [...this.committed[dataset].values()])
      yield {
        itemId: row.itemId,
        hash: row.hash,
        isDeleted: row.isDeleted,
        sourceHash: row.sourceHash ?? null,
      };
  }
  async stageChanges(nextVersion: number, dataset: Dataset, changes: StagedChange[]) {
    this.stageCalls.push(changes.length);
    for (const change of changes) {
      const prior = this.committed[dataset].get(change.itemId);
      const complete =
        change.isDeleted && prior
          ? { ...change, data: prior.data, hash: prior.hash, sourceHash: undefined }
          : change;
      this.staged.push({ dataset, version: nextVersion, change: complete });
    }
  }
  async commit(args: {
    expectedVersion: number;
    nextVersion: number;
    committedAt: Date;
    event: OutboxEvent;
  }) {
    if (this.failCommit) throw new Error('injected commit failure');
    if (this.version !== args.expectedVersion) throw new Error('version moved');
    for (const s of this.staged.filter((x) => x.version === args.nextVersion)) {
      const { itemId, data, hash = '', isDeleted, sourceHash } = s.change;
      this.committed[s.dataset].set(itemId, {
        itemId,
        data,
        hash,
        sourceHash,
        isDeleted,
        version: args.nextVersion,
      });
    }
    this.staged = [];
    this.version = args.nextVersion;
    this.outbox.push(args.event);
  }
  async recordUnchangedRun(event: OutboxEvent) {
    this.outbox.push(event);
  }

  active(dataset: Dataset): string[] {
    return [...this.committed[dataset].values()]
      .filter((r) => !r.isDeleted)
      .map((r) => r.itemId)
      .sort();
  }
}

/**
 * An upstream that yields the given values and can be changed between passes. With
 * `withSourceHash`, each record also carries the hash of its JSON text, as the file and HTTP
 * sources do, and `parsed` counts the records whose value was read.
 */
export class MemorySource implements UpstreamSource {
  description: string;
  opened = 0;
  onRead?: (pass: number) => void;
  withSourceHash = false;
  parsed = 0;

  constructor(
    public values: unknown[],
    name = 'memory',
  ) {
    this.description = `memory://${name}`;
  }
  async open() {
    this.opened++;
    let pass = 0;
    const read = async function* (source: MemorySource) {
      pass++;
      source.onRead?.(pass);
      let index = 0;
      for (const value of [...source.values]) {
        index++;
        if (!source.withSourceHash) {
          yield { index, value };
          continue;
        }
        const text = JSON.stringify(value);
        let parsed: { value: unknown } | undefined;
        yield {
          index,
          sourceHash: createHash('sha256').update(text).digest('base64'),
          get value() {
            if (!parsed) {
              source.parsed++;
              parsed = { value: JSON.parse(text) as unknown };
            }
            return parsed.value;
          },
        };
      }
    };
    return {
      description: this.description,
      records: () => read(this),
      async close() {
        return undefined;
      },
    };
  }
}
