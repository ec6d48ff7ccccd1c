import { VersionTracker } from '../src/versions/version-tracker';

const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined };

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('VersionTracker', () => {
  it('when a refresh is asked for while a read is under way, then it is answered by a read that starts afterwards', async () => {
    const reads: Array<ReturnType<typeof deferred<number>>> = [];
    const changes: number[] = [];
    const tracker = new VersionTracker({
      read: () => {
        const d = deferred<number>();
        reads.push(d);
        return d.promise;
      },
      logger,
      onChange: (v) => changes.push(v),
    });
    const first = tracker.refresh('periodic');
    const second = tracker.refresh('event'); // the commit it announces may be newer than read 1
    const third = tracker.refresh('request'); // joins the queued read, not a third one
    expect(reads).toHaveLength(1);
    reads[0]?.resolve(4);
    await expect(first).resolves.toBe(4);
    await Promise.resolve();
    await Promise.resolve();
    expect(reads).toHaveLength(2);
    reads[1]?.resolve(5);
    await expect(second).resolves.toBe(5);
    await expect(third).resolves.toBe(5);
    expect(changes).toEqual([4, 5]);
    expect(tracker.current()).toBe(5);
  });

  it('when a read fails, then the version is kept and the next refresh reads again', async () => {
    let fail = true;
    const tracker = new VersionTracker({
      read: async () => {
        if (fail) throw new Error('down');
        return 2;
      },
      logger,
      onChange: () => undefined,
    });
    await expect(tracker.refresh('start')).rejects.toThrow('down');
    expect(tracker.current()).toBeUndefined();
    fail = false;
    await expect(tracker.refresh('request')).resolves.toBe(2);
  });
});
