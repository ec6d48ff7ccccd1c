import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

const ROOT = resolve(__dirname, '../../../..');

/** What tools read of a docker-compose.yml service to run it as compose deploys it. */
export interface ComposeService {
  mem_limit?: unknown;
  environment?: Record<string, unknown>;
}

/**
 * `service` as docker-compose.yml defines it (anchors and merge keys resolved), or undefined: for
 * tools that run a service with the settings compose gives it (its memory limit, its
 * NODE_OPTIONS), so that the two cannot drift apart.
 */
export function composeService(service: string): ComposeService | undefined {
  const compose = parse(readFileSync(resolve(ROOT, 'docker-compose.yml'), 'utf8'), {
    merge: true,
  }) as { services?: Record<string, ComposeService> } | null;
  return compose?.services?.[service];
}

/** The NODE_OPTIONS docker-compose.yml gives `service`, or undefined when it sets none. */
export function composeNodeOptions(service: string): string | undefined {
  const options = composeService(service)?.environment?.['NODE_OPTIONS'];
  return typeof options === 'string' && options !== '' ? options : undefined;
}
