import { open, rm } from 'node:fs/promises';
import type { UpstreamRecord, UpstreamSnapshot } from '@nhp/refsync-sync';
import { parseUpstream } from './parse-upstream';
import { upstreamError } from './upstream-error';

/**
 * Opens a local file as a snapshot. The file handle is kept open so that every pass reads the same
 * file even if someone replaces it (rename) meanwhile; an in-place rewrite is caught by the sync,
 * which checks that both passes hash each item the same.
 */
export async function openFileSnapshot(
  path: string,
  description: string,
  options: { removeOnClose?: string } = {},
): Promise<UpstreamSnapshot> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw upstreamError(
      code === 'ENOENT' ? 'not_found' : 'unreachable',
      code === 'ENOENT'
        ? `upstream file not found: ${description}`
        : `cannot read upstream file ${description} (${code})`,
      { cause: err },
    );
  }
  const fh = handle;
  return {
    description,
    records(): AsyncIterable<UpstreamRecord> {
      return parseUpstream(
        fh.createReadStream({ start: 0, autoClose: false, highWaterMark: 256 * 1024 }),
      );
    },
    async close() {
      await fh.close();
      if (options.removeOnClose) await rm(options.removeOnClose, { recursive: true, force: true });
    },
  };
}
