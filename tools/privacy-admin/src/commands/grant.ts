import { PRIVACY_CODES } from '@nhp/privacy-contracts';
import { DEFAULT_CACHE_TTL_MS } from '@nhp/privacy-data-access';
import { createGrantUseCases } from '@nhp/privacy-domain';
import { AppError } from '@nhp/shared-errors';
import { parseOptions, requiredValue } from './args';
import { CommandError, defineCommand } from './command';

interface GrantArgs {
  clientId: string;
  partKode: string;
  read: boolean;
  write: boolean;
  json: boolean;
}

export const grantCommand = defineCommand<GrantArgs>({
  name: 'grant',
  summary: 'let a client read and/or write the settings of a party’s definitions',
  usage: `privacy-admin grant --client ID --part KODE [--read] [--write] [--json]

Sets the client's grant on the party to exactly the rights given; with neither
--read nor --write, both. The party must exist. Running privacy-api instances
are told on NATS and drop their cached grant at once; when none could be told,
it says so on stderr (they then see the change within ${DEFAULT_CACHE_TTL_MS / 1000} s).`,
  parse(argv) {
    const v = parseOptions(argv, {
      client: { type: 'string' },
      part: { type: 'string' },
      read: { type: 'boolean' },
      write: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const both = !v.read && !v.write;
    return {
      clientId: requiredValue(v.client, '--client'),
      partKode: requiredValue(v.part, '--part'),
      read: both || v.read === true,
      write: both || v.write === true,
      json: v.json === true,
    };
  },
  async run(args, store, io) {
    const grants = createGrantUseCases(store);
    const grant = await grants
      .grant(store.caller, {
        clientId: args.clientId,
        partKode: args.partKode,
        read: args.read,
        write: args.write,
      })
      .catch((err: unknown) => {
        if (err instanceof AppError && err.code === PRIVACY_CODES.unknownPart) {
          throw new CommandError(`no party with partKode ${args.partKode}; nothing was changed`);
        }
        throw err;
      });
    const rights = [grant.read && 'read', grant.write && 'write'].filter(Boolean).join(', ');
    io.out(
      args.json
        ? `${JSON.stringify(grant)}\n`
        : `granted: client ${grant.clientId} on part ${grant.partKode}: ${rights}\n`,
    );
    return 0;
  },
});
