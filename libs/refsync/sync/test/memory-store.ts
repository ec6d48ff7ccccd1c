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
      yield { itemId: row.itemId, hash: row.hash, isDeleted: row.isDeleted };
  }
  async stageChanges(nextVersion: number, dataset: Dataset, changes: StagedChange[]) {
    this.stageCalls.push(changes.length);
    for (const change of changes) {
      const prior = this.committed[dataset].get(change.itemId);
      const complete =
        change.isDeleted && prior ? { ...change, data: prior.data, hash: prior.hash } : change;
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
      const { itemId, data, hash = '', isDeleted } = s.change;
      this.committed[s.dataset].set(itemId, {
        itemId,
        data,
        hash,
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

/** An upstream that yields the given values (or raw records) and can be changed between passes. */
export class MemorySource implements UpstreamSource {
  description: string;
  opened = 0;
  onRead?: (pass: number) => void;

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
      for (const value of [...source.values]) yield { index: ++index, value };
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
