import {
  createRefsyncClient,
  RefsyncMirror,
  type MirrorChanges,
  type Spelling,
} from '@nhp/refsync-client';
import { loadMirrorFile, saveMirrorFile } from './mirror-file';

export interface RunMirrorOptions {
  url: string;
  apiKey: string;
  file: string;
  spelling: Spelling;
  /** Start over even when the file mirrors another service. */
  reset?: boolean;
  fetch?: typeof fetch;
}

/**
 * One mirror run: load the file (if any), sync both datasets, save the file. Returns what changed.
 * The file is written only after both datasets synced, so a failed run leaves the previous copy.
 */
export async function runMirror(options: RunMirrorOptions): Promise<MirrorChanges[]> {
  const baseUrl = options.url.replace(/\/+$/, '');
  const saved = await loadMirrorFile(options.file);
  if (saved && saved.baseUrl !== baseUrl && !options.reset) {
    throw new Error(
      `${options.file} mirrors ${saved.baseUrl}, not ${baseUrl}: data versions of different services are unrelated; pass --reset to start over or use another --file`,
    );
  }
  const client = createRefsyncClient({
    baseUrl,
    apiKey: options.apiKey,
    spelling: options.spelling,
    fetch: options.fetch,
  });
  const mirror = new RefsyncMirror(client, options.reset ? {} : (saved?.datasets ?? {}));
  const changes = await mirror.syncAll();
  await saveMirrorFile(options.file, {
    baseUrl,
    spelling: options.spelling,
    datasets: mirror.snapshot(),
  });
  return changes;
}

const MAX_IDS_SHOWN = 20;

function ids(sign: string, list: string[]): string[] {
  if (list.length === 0) return [];
  const shown = list.slice(0, MAX_IDS_SHOWN).join(', ');
  const more = list.length > MAX_IDS_SHOWN ? ` … and ${list.length - MAX_IDS_SHOWN} more` : '';
  return [`  ${sign} ${shown}${more}`];
}

/** Human-readable report of one run: a line per dataset, then the ids added (+), updated (~), removed (-). */
export function formatChanges(changes: readonly MirrorChanges[]): string {
  const lines: string[] = [];
  for (const c of changes) {
    const from = c.fromVersion === null ? 'empty' : `version ${c.fromVersion}`;
    if (c.notModified) {
      lines.push(`${c.dataset}: version ${c.currentVersion}, not modified (304)`);
      continue;
    }
    const counts = `${c.added.length} added, ${c.updated.length} updated, ${c.removed.length} removed`;
    const how = c.fullResync ? ' (full list)' : '';
    lines.push(`${c.dataset}: ${from} -> version ${c.currentVersion}${how}: ${counts}`);
    lines.push(...ids('+', c.added), ...ids('~', c.updated), ...ids('-', c.removed));
  }
  return lines.join('\n');
}
