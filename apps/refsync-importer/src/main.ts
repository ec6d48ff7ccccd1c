import { main } from './cli';

main().catch((err: unknown) => {
  process.stderr.write(
    `refsync-importer: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
