import { createGrantUseCases } from '@nhp/privacy-domain';
import { parseOptions, requiredValue } from './args';
import { defineCommand } from './command';

interface RevokeArgs {
  clientId: string;
  partKode: string;
}

export const revokeCommand = defineCommand<RevokeArgs>({
  name: 'revoke',
  summary: 'withdraw a client’s grant on a party',
  usage: `privacy-admin revoke --client ID --part KODE

Withdraws both rights. Revoking a grant that gives nothing changes nothing and
says so (exit 0). Running privacy-api instances are told as for grant.`,
  parse(argv) {
    const v = parseOptions(argv, { client: { type: 'string' }, part: { type: 'string' } });
    return {
      clientId: requiredValue(v.client, '--client'),
      partKode: requiredValue(v.part, '--part'),
    };
  },
  async run(args, store, io) {
    const revoked = await createGrantUseCases(store).revoke(store.caller, {
      clientId: args.clientId,
      partKode: args.partKode,
    });
    io.out(
      revoked
        ? `revoked: client ${args.clientId} on part ${args.partKode}\n`
        : `nothing to revoke: client ${args.clientId} has no grant on part ${args.partKode}\n`,
    );
    return 0;
  },
});
