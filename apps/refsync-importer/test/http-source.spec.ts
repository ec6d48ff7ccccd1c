import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { useTestInfra } from '@nhp/shared-testing';
import { createLogger } from '@nhp/shared-logger';
import type { ImporterContext, ImporterContextOptions } from '../src/context';
import { ids, readerView, rg, startContext, testConfig, tg } from './helpers';

const infra = useTestInfra();

describe('importer with http(s) upstream sources', () => {
  let server: Server;
  let base: string;
  const routes = new Map<string, { status: number; body?: unknown }[]>();
  const hits = new Map<string, number>();
  const authHeaders: Array<string | undefined> = [];
  const contexts: ImporterContext[] = [];

  beforeAll(async () => {
    // Each path answers its queued responses in order; the last one repeats.
    server = createServer((req, res) => {
      const path = req.url ?? '/';
      hits.set(path, (hits.get(path) ?? 0) + 1);
      authHeaders.push(req.headers.authorization);
      const queue = routes.get(path) ?? [{ status: 404 }];
      const next = queue.length > 1 ? queue.shift() : queue[0];
      res.writeHead(next?.status ?? 500, { 'content-type': 'application/json' });
      res.end(next?.body === undefined ? '' : JSON.stringify(next.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const ctx of contexts) await ctx.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function importerFor(name: string, options: Partial<ImporterContextOptions> = {}) {
    const ctx = await startContext(
      testConfig(infra.get(), {
        REFSYNC_SOURCE_TREATMENT_GROUP: `${base}/${name}/tg.json`,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: `${base}/${name}/rg.json`,
        REFSYNC_SOURCE_AUTH_HEADER: 'Authorization: Bearer upstream-secret',
      }),
      { connectToNats: false, ...options },
    );
    contexts.push(ctx);
    return ctx;
  }

  it('when upstream serves both datasets over HTTP, then they are committed and the auth header was sent', async () => {
    routes.set('/ok/tg.json', [{ status: 200, body: [tg('T1'), tg('T2')] }]);
    routes.set('/ok/rg.json', [{ status: 200, body: [rg('R1')] }]);
    const ctx = await importerFor('ok');
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report).toMatchObject({ outcome: 'committed', committedVersion: 1 });
    expect(report.sources.treatmentGroup).toBe(`${base}/ok/tg.json`);
    const view = await readerView(ctx.conn);
    expect(ids(view.treatmentGroup)).toEqual(['T1', 'T2']);
    expect(ids(view.reimbursementGroup)).toEqual(['R1']);
    expect(authHeaders).toContain('Bearer upstream-secret');
  });

  it('when upstream answers 503 before it answers 200, then the importer retries and commits', async () => {
    routes.set('/flaky/tg.json', [
      { status: 503 },
      { status: 502 },
      { status: 200, body: [tg('T1')] },
    ]);
    routes.set('/flaky/rg.json', [{ status: 200, body: [rg('R1')] }]);
    const lines: string[] = [];
    const ctx = await importerFor('flaky', {
      logger: createLogger({
        name: 'test',
        level: 'warn',
        destination: { write: (line: string) => lines.push(line) },
      }),
    });
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('committed');
    expect(hits.get('/flaky/tg.json')).toBe(3);
    const retries = lines
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === 'upstream download failed, retrying');
    expect(retries).toHaveLength(2);
    expect(retries.every((l) => l.runId === report.runId)).toBe(true);
    expect(lines.join('\n')).not.toContain('upstream-secret');
  });

  it('when upstream answers 403, then it is not retried, the run aborts and nothing is committed', async () => {
    routes.set('/forbidden/tg.json', [{ status: 403 }]);
    routes.set('/forbidden/rg.json', [{ status: 200, body: [rg('R1')] }]);
    const ctx = await importerFor('forbidden');
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report).toMatchObject({ outcome: 'aborted', error: { reason: 'upstream_unavailable' } });
    expect(report.error?.message).toMatch(/HTTP 403/);
    expect(report.error?.message).not.toMatch(/upstream-secret/);
    expect(hits.get('/forbidden/tg.json')).toBe(1);
    expect((await readerView(ctx.conn)).version).toBe(0);
  });

  it('when upstream keeps failing with 500, then the run aborts after the configured retries', async () => {
    routes.set('/down/tg.json', [{ status: 500 }]);
    routes.set('/down/rg.json', [{ status: 200, body: [rg('R1')] }]);
    const ctx = await importerFor('down');
    const report = await ctx.importer.run({ trigger: 'cli' });
    expect(report.outcome).toBe('aborted');
    expect(hits.get('/down/tg.json')).toBe(3); // REFSYNC_SOURCE_RETRIES=2 in tests
  });
});
