import { SingleFlight } from '../src/cache/single-flight';

describe('SingleFlight', () => {
  it('when callers ask for one key concurrently, then the computation runs once and all get its result', async () => {
    const flights = new SingleFlight<number>();
    let runs = 0;
    let release!: (v: number) => void;
    const compute = () => {
      runs++;
      return new Promise<number>((resolve) => (release = resolve));
    };
    const all = Promise.all([
      flights.run('k', compute),
      flights.run('k', compute),
      flights.run('k', compute),
    ]);
    await Promise.resolve();
    release(42);
    expect(await all).toEqual([42, 42, 42]);
    expect(runs).toBe(1);
    expect(flights.size).toBe(0);
  });

  it('when a computation fails, then the failure is shared and not remembered', async () => {
    const flights = new SingleFlight<number>();
    await expect(flights.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(
      flights.run('k', () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(flights.size).toBe(0);
    await expect(flights.run('k', async () => 7)).resolves.toBe(7);
  });
});
