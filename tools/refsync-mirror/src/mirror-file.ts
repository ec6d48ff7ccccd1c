import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { MirrorState, Spelling } from '@nhp/refsync-client';
import { z } from 'zod';

export const MIRROR_FILE_FORMAT = 'refsync-mirror/1';

const datasetStateSchema = z.object({
  currentVersion: z.int().min(0).nullable(),
  etag: z.string().nullable(),
  etagSinceVersion: z.int().nullable(),
  items: z.record(z.string(), z.unknown()),
});

export const mirrorFileSchema = z.object({
  format: z.literal(MIRROR_FILE_FORMAT),
  baseUrl: z.string(),
  spelling: z.enum(['primary', 'alternative']),
  syncedAt: z.string(),
  datasets: z.object({
    treatmentGroup: datasetStateSchema.optional(),
    reimbursementGroup: datasetStateSchema.optional(),
  }),
});
export type MirrorFile = z.infer<typeof mirrorFileSchema>;

/** The saved mirror, or undefined when the file does not exist yet. */
export async function loadMirrorFile(path: string): Promise<MirrorFile | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not JSON; move it away or pass another --file`);
  }
  const parsed = mirrorFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(
      `${path} is not a ${MIRROR_FILE_FORMAT} file (${parsed.error.issues[0]?.path.join('.') || 'top level'}: ${parsed.error.issues[0]?.message}); move it away or pass another --file`,
    );
  }
  return parsed.data;
}

/** Written to a temporary file and renamed, so a crash never leaves half a mirror behind. */
export async function saveMirrorFile(
  path: string,
  content: { baseUrl: string; spelling: Spelling; datasets: MirrorState },
): Promise<void> {
  const file: MirrorFile = {
    format: MIRROR_FILE_FORMAT,
    baseUrl: content.baseUrl,
    spelling: content.spelling,
    syncedAt: new Date().toISOString(),
    datasets: content.datasets,
  };
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, 'utf8');
    await rename(temporary, path);
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}
