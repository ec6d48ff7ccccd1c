/**
 * `npm run bench [-- <name> ...]`: runs the named benchmarks (default: all but the soak, which
 * takes 20 minutes and runs only when named). Each one measures its baseline in the same run and
 * prints figures, ratios and targets; nothing here asserts on time.
 */
const benches: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  'mongo-server': () => import('./mongo-server'),
  'privacy-api': () => import('./privacy-api'),
  'privacy-hostile': () => import('./privacy-hostile'),
  'privacy-mirror': () => import('./privacy-mirror'),
  'refsync-api': () => import('./refsync-api'),
  'refsync-importer': () => import('./refsync-importer'),
  soak: () => import('./soak'),
};

const ONLY_WHEN_NAMED = new Set(['soak']);

async function main(): Promise<void> {
  const requested = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = requested.filter((name) => !(name in benches));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(benches).join(', ')}\n`,
    );
    process.exit(2);
  }
  const selected = Object.entries(benches).filter(([name]) =>
    requested.length === 0 ? !ONLY_WHEN_NAMED.has(name) : requested.includes(name),
  );
  for (const [name, load] of selected) {
    process.stdout.write(`\n=== ${name}\n`);
    await (await load()).run();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
