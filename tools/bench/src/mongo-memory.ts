/**
 * What the MongoDB-compatible server holds for a data folder, and what starting on it costs
 * (issue 36; figures in tools/bench/README.md, "soak"). Not one of `npm run bench`'s benchmarks: a
 * diagnostic run on a data folder a soak left (tmp/bench-soak/mongo/data), on a copy of it:
 *
 *   NODE_OPTIONS=--expose-gc npx tsx --tsconfig tsconfig.base.json tools/bench/src/mongo-memory.ts <dataFile>
 *
 * 1. In this process, `start({dataFile})` on the copy: load time (wall and CPU), then after a full
 *    garbage collection `process.memoryUsage()`; then every collection's secondary indexes dropped
 *    and every database dropped, each followed by a collection, so that the differences say what
 *    the indexes and the documents held (through the wire protocol, no internals).
 * 2. The CLI as `npm run mongo-server` runs it (startServerProcess: node, its flags and the CLI's
 *    bundle), on a fresh copy: wall time from the spawn to a ping answered and the process's CPU
 *    by then, as the soak measures start-up after a SIGKILL; and the same on an empty data folder,
 *    which is node + the code alone.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { start, startServerProcess } from '@nhp/mongo-server';

const MIB = 1024 * 1024;
const mib = (n: number): string => `${(n / MIB).toFixed(1)} MiB`;

async function copyFolder(dataFile: string): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'mongo-memory-'));
  const from = path.dirname(dataFile);
  const base = path.basename(dataFile);
  for (const name of await readdir(from)) {
    if (name === base || name.startsWith(`${base}.journal.`))
      await cp(path.join(from, name), path.join(dir, name));
  }
  return { dir, file: path.join(dir, base) };
}

async function folderBytes(dataFile: string): Promise<number> {
  const base = path.basename(dataFile);
  let total = 0;
  for (const name of await readdir(path.dirname(dataFile))) {
    if (name === base || name.startsWith(`${base}.journal.`))
      total += (await stat(path.join(path.dirname(dataFile), name))).size;
  }
  return total;
}

function collect(): NodeJS.MemoryUsage {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with NODE_OPTIONS=--expose-gc');
  gc();
  gc();
  return process.memoryUsage();
}

async function cpuSeconds(pid: number): Promise<number> {
  const s = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) * 1024;
}

async function inProcess(dataFile: string): Promise<void> {
  const copy = await copyFolder(dataFile);
  try {
    const base = collect();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const server = await start({
      port: 0,
      dataFile: copy.file,
      journal: { snapshotOnStop: false },
    });
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const client = await MongoClient.connect(server.uri);
    try {
      const loaded = collect();
      let documents = 0;
      const dbs = (await client.db('admin').admin().listDatabases()).databases.map((d) => d.name);
      for (const db of dbs) {
        for (const c of await client.db(db).listCollections().toArray()) {
          documents += await client.db(db).collection(c.name).estimatedDocumentCount();
          await client.db(db).collection(c.name).dropIndexes();
        }
      }
      const noIndexes = collect();
      for (const db of dbs) await client.db(db).dropDatabase();
      const empty = collect();
      const row = (what: string, m: NodeJS.MemoryUsage): string =>
        `${what.padEnd(26)} rss ${mib(m.rss).padStart(10)}  heap used/total ${mib(m.heapUsed).padStart(10)} / ${mib(m.heapTotal).padStart(10)}  arrayBuffers ${mib(m.arrayBuffers).padStart(10)}  external ${mib(m.external).padStart(10)}`;
      process.stdout.write(
        [
          `data folder ${mib(await folderBytes(dataFile))}, ${documents} documents`,
          `load (start() until ready): ${wall.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU`,
          row('before start', base),
          row('loaded', loaded),
          row('secondary indexes dropped', noIndexes),
          row('databases dropped', empty),
          `secondary indexes: heap ${mib(loaded.heapUsed - noIndexes.heapUsed)}; documents (records, _id index, bytes): heap ${mib(noIndexes.heapUsed - empty.heapUsed)}, arrayBuffers ${mib(noIndexes.arrayBuffers - empty.arrayBuffers)}`,
          '',
        ].join('\n'),
      );
    } finally {
      await client.close();
      await server.stop();
    }
  } finally {
    await rm(copy.dir, { recursive: true, force: true });
  }
}

async function cliStart(dataFile: string, label: string): Promise<void> {
  const t0 = performance.now();
  const server = await startServerProcess({ dataFile });
  const client = await MongoClient.connect(server.uri, { serverSelectionTimeoutMS: 60_000 });
  await client.db('admin').command({ ping: 1 });
  const wall = performance.now() - t0;
  const cpu = server.pid ? await cpuSeconds(server.pid) : Number.NaN;
  const rss = server.pid ? await rssBytes(server.pid) : Number.NaN;
  await client.close();
  await server.kill('SIGKILL');
  process.stdout.write(
    `CLI start (${label}): ping after ${wall.toFixed(0)} ms wall, ${(cpu * 1000).toFixed(0)} ms of the process's CPU; RSS then ${mib(rss)}\n`,
  );
}

async function main(): Promise<void> {
  const dataFile = process.argv[2];
  if (!dataFile) throw new Error('usage: mongo-memory.ts <dataFile>');
  await inProcess(path.resolve(dataFile));
  const copy = await copyFolder(path.resolve(dataFile));
  const empty = await mkdtemp(path.join(tmpdir(), 'mongo-memory-empty-'));
  try {
    await cliStart(copy.file, 'the data folder');
    await mkdir(empty, { recursive: true });
    await cliStart(path.join(empty, 'data'), 'an empty data folder');
  } finally {
    await rm(copy.dir, { recursive: true, force: true });
    await rm(empty, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
