import type { AuditFilter } from '@nhp/privacy-data-access';
import { parseOptions } from './args';
import { defineCommand, UsageError } from './command';

interface AuditArgs {
  filter: AuditFilter;
  limit: number;
  json: boolean;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const auditCommand = defineCommand<AuditArgs>({
  name: 'audit',
  summary: 'list the audit trail of a citizen, a definition or a party',
  usage: `privacy-admin audit (--fnr F | --definisjon GUID | --part KODE) [--limit N] [--json]

Oldest first, at most N records (default 1000), including writes whose audit
record is still waiting to be relayed (marked "pending"). The output names the
citizen's identity number: handle it as personal data.`,
  parse(argv) {
    const v = parseOptions(argv, {
      fnr: { type: 'string' },
      definisjon: { type: 'string' },
      part: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    const given = [v.fnr, v.definisjon, v.part].filter((x) => x !== undefined);
    if (given.length !== 1) {
      throw new UsageError('give exactly one of --fnr, --definisjon and --part');
    }
    let filter: AuditFilter;
    if (v.fnr !== undefined) {
      if (!/^\d{11}$/.test(v.fnr)) throw new UsageError('--fnr must be 11 digits');
      filter = { fnr: v.fnr };
    } else if (v.definisjon !== undefined) {
      if (!GUID.test(v.definisjon)) throw new UsageError('--definisjon must be a GUID');
      filter = { definisjonGuid: v.definisjon.toLowerCase() };
    } else {
      if (!v.part?.trim()) throw new UsageError('--part needs a value');
      filter = { partKode: v.part.trim() };
    }
    const limit = v.limit === undefined ? 1000 : Number(v.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000) {
      throw new UsageError('--limit must be an integer from 1 to 100000');
    }
    return { filter, limit, json: v.json === true };
  },
  async run(args, store, io) {
    const records = await store.journal.listAudit(args.filter, args.limit);
    if (args.json) {
      io.out(`${JSON.stringify(records, null, 2)}\n`);
      return 0;
    }
    if (records.length === 0) {
      io.out('no audit records\n');
      return 0;
    }
    for (const r of records) {
      const fields = [
        r.at.toISOString(),
        r.operation,
        `${r.actor.kind}:${r.actor.id}`,
        r.target.key,
        r.requestId ? `request ${r.requestId}` : '',
        r.relayed ? '' : 'pending',
      ];
      io.out(`${fields.filter(Boolean).join('\t')}\n`);
    }
    return 0;
  },
});
