import { createGrantUseCases } from '@nhp/privacy-domain';
import { parseOptions } from './args';
import { defineCommand, UsageError } from './command';

interface GrantsArgs {
  clientId: string | undefined;
  json: boolean;
}

export const grantsCommand = defineCommand<GrantsArgs>({
  name: 'grants',
  summary: 'list the grants (of one client with --client)',
  usage: `privacy-admin grants [--client ID] [--json]

One line per grant that gives something: client, party, rights, last change.`,
  parse(argv) {
    const v = parseOptions(argv, { client: { type: 'string' }, json: { type: 'boolean' } });
    if (v.client !== undefined && v.client.trim() === '') {
      throw new UsageError('--client needs a value');
    }
    return { clientId: v.client?.trim(), json: v.json === true };
  },
  async run(args, store, io) {
    const grants = await createGrantUseCases(store).list(
      store.caller,
      args.clientId === undefined ? {} : { clientId: args.clientId },
    );
    if (args.json) {
      io.out(`${JSON.stringify(grants, null, 2)}\n`);
      return 0;
    }
    if (grants.length === 0) {
      io.out('no grants\n');
      return 0;
    }
    for (const g of grants) {
      const rights = [g.read && 'read', g.write && 'write'].filter(Boolean).join(',');
      io.out(`${g.clientId}\t${g.partKode}\t${rights}\t${g.updatedAt.toISOString()}\n`);
    }
    return 0;
  },
});
