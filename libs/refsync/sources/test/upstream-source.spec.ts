import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { UpstreamSnapshot } from '@nhp/refsync-sync';
import { createUpstreamSource, describeUpstreamUrl, parseHeaderLine } from '../src/upstream-source';

async function values(snapshot: UpstreamSnapshot): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const r of snapshot.records()) out.push(r.value);
  return out;
}

const items = [
  { id: 'TG1', name: 'One' },
  { id: 'TG2', name: 'Two' },
];
const fastRetry = { timeoutMs: 2000, retries: 2, baseDelayMs: 5, maxDelayMs: 20 };

describe('file:// source', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'refsync-sources-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('when the file is a JSON array, then its items are read, and can be read twice', async () => {
    const file = join(dir, 'array.json');
    await writeFile(file, JSON.stringify(items));
    const snapshot = await createUpstreamSource(pathToFileURL(file).href, fastRetry).open();
    try {
      expect(await values(snapshot)).toEqual(items);
      expect(await values(snapshot)).toEqual(items);
    } finally {
      await snapshot.close();
    }
  });

  it('when the file is NDJSON, then its items are read', async () => {
    const file = join(dir, 'items.ndjson');
    await writeFile(file, items.map((i) => JSON.stringify(i)).join('\n'));
    const snapshot = await createUpstreamSource(pathToFileURL(file).href, fastRetry).open();
    expect(await values(snapshot)).toEqual(items);
    await snapshot.close();
  });

  it('when the file is replaced by a rename while open, then the snapshot keeps reading the file it opened', async () => {
    const file = join(dir, 'replaced.json');
    await writeFile(file, JSON.stringify(items));
    const snapshot = await createUpstreamSource(pathToFileURL(file).href, fastRetry).open();
    await writeFile(join(dir, 'next.json'), '[]');
    await rename(join(dir, 'next.json'), file);
    expect(await values(snapshot)).toEqual(items);
    await snapshot.close();
  });

  it('when the file does not exist, then opening fails as not_found', async () => {
    const source = createUpstreamSource(pathToFileURL(join(dir, 'missing.json')).href, fastRetry);
    await expect(source.open()).rejects.toMatchObject({ code: 'UPSTREAM_NOT_FOUND' });
  });

  it('when the URL scheme is not supported, then creating the source fails', () => {
    expect(() => createUpstreamSource('ftp://example.invalid/x.json', fastRetry)).toThrow(
      /unsupported/,
    );
  });
});

describe('http(s):// source', () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void;
  const requests: IncomingMessage[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req);
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    requests.length = 0;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('when upstream answers 200 with a JSON array, then the items are read and the auth header was sent', async () => {
    handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(items));
    const source = createUpstreamSource(`${base}/tg.json`, {
      ...fastRetry,
      headers: parseHeaderLine('Authorization: Bearer s3cret'),
    });
    const snapshot = await source.open();
    expect(await values(snapshot)).toEqual(items);
    expect(await values(snapshot)).toEqual(items);
    await snapshot.close();
    expect(requests).toHaveLength(1);
    expect(requests[0].headers.authorization).toBe('Bearer s3cret');
  });

  it('when upstream answers 503 twice and then 200, then the download is retried and succeeds', async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      if (calls <= 2) res.writeHead(503).end('busy');
      else res.writeHead(200).end(JSON.stringify(items));
    };
    const warnings: object[] = [];
    const snapshot = await createUpstreamSource(`${base}/flaky.json`, {
      ...fastRetry,
      logger: { warn: (obj) => warnings.push(obj) },
    }).open();
    expect(await values(snapshot)).toEqual(items);
    await snapshot.close();
    expect(requests).toHaveLength(3);
    expect(warnings).toHaveLength(2);
  });

  it('when upstream keeps answering 500, then it gives up after the configured retries', async () => {
    handler = (_req, res) => res.writeHead(500).end();
    await expect(createUpstreamSource(`${base}/down.json`, fastRetry).open()).rejects.toMatchObject(
      {
        code: 'UPSTREAM_HTTP_STATUS',
        message: expect.stringContaining('500'),
      },
    );
    expect(requests).toHaveLength(3);
  });

  it('when upstream answers 404 or 401, then it is not retried', async () => {
    handler = (_req, res) => res.writeHead(404).end();
    await expect(
      createUpstreamSource(`${base}/missing.json`, fastRetry).open(),
    ).rejects.toMatchObject({
      code: 'UPSTREAM_HTTP_STATUS',
      category: 'client',
    });
    expect(requests).toHaveLength(1);
    requests.length = 0;
    handler = (_req, res) => res.writeHead(401).end();
    await expect(
      createUpstreamSource(`${base}/secret.json`, fastRetry).open(),
    ).rejects.toMatchObject({
      message: expect.stringContaining('401'),
    });
    expect(requests).toHaveLength(1);
  });

  it('when upstream does not answer in time, then each attempt times out and it is retried', async () => {
    handler = () => undefined; // never answers
    await expect(
      createUpstreamSource(`${base}/slow.json`, {
        ...fastRetry,
        timeoutMs: 100,
        retries: 1,
      }).open(),
    ).rejects.toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(requests).toHaveLength(2);
  });

  it('when upstream closes the connection before the declared length, then it is retried', async () => {
    let calls = 0;
    handler = (_req, res) => {
      calls++;
      const body = JSON.stringify(items);
      if (calls === 1) {
        res.writeHead(200, { 'content-length': String(body.length + 100) });
        res.write(body.slice(0, 10));
        res.socket?.destroy();
      } else {
        res.writeHead(200, { 'content-length': String(body.length) }).end(body);
      }
    };
    const snapshot = await createUpstreamSource(`${base}/cut.json`, fastRetry).open();
    expect(await values(snapshot)).toEqual(items);
    await snapshot.close();
    expect(requests).toHaveLength(2);
  });

  it('when nothing listens on the port, then it is unreachable after retries', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    await expect(
      createUpstreamSource(`http://127.0.0.1:${port}/x.json`, fastRetry).open(),
    ).rejects.toMatchObject({
      code: 'UPSTREAM_UNREACHABLE',
    });
  });
});

describe('describeUpstreamUrl and parseHeaderLine', () => {
  it('when a URL carries credentials or a query, then the description hides them', () => {
    expect(describeUpstreamUrl('https://user:pw@example.invalid/a.json?token=x')).toBe(
      'https://example.invalid/a.json?…',
    );
  });

  it('when a header line is malformed, then the error does not echo the value', () => {
    expect(() => parseHeaderLine('Bearer s3cret')).toThrow(/Header-Name/);
    expect(() => parseHeaderLine('Bearer s3cret')).not.toThrow(/s3cret/);
    expect(parseHeaderLine('X-Api-Key:  abc ')).toEqual({ 'X-Api-Key': 'abc' });
  });
});
