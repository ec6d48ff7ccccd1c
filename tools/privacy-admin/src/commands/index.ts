import { auditCommand } from './audit';
import type { AdminCommand } from './command';
import { grantCommand } from './grant';
import { grantsCommand } from './grants';
import { importRepresentationCommand } from './import-representation';
import { revokeCommand } from './revoke';

/** Every subcommand, in the order `--help` lists them. Add a command: its file, one line here. */
export const COMMANDS: readonly AdminCommand[] = [
  grantCommand,
  revokeCommand,
  grantsCommand,
  auditCommand,
  importRepresentationCommand,
];
