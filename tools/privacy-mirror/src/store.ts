import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export const MIRROR_FORMAT = 'privacy-mirror/1';

/** One citizen's setting of one definition, as the copy holds it. */
export interface MirrorEntry {
  definisjonGuid: string;
  /** The citizen's national identity number: the file is personal data. */
  innbyggerFnr: string;
  aktiv: boolean;
  sekvensnummer: number;
  sistEndretTidspunkt: string | null;
}

/** A definition the copy follows (from GET /innstillingdefinisjon/v1). */
export interface MirroredDefinition {
  definisjonGuid: string;
  navn: string | null;
  typePi: string;
  status: string;
  replikering: boolean;
}

export interface MirrorState {
  format: typeof MIRROR_FORMAT;
  /** The privacy-api the copy was walked from. */
  api: string;
  partKode: string;
  /** The durable JetStream consumer whose position belongs to this copy. */
  consumer: string;
  /** When the first walk finished; a copy without one is walked again. */
  walkedAt: string | null;
  /** The last PRIVACY_EVENTS stream sequence applied. */
  streamSequence: number;
  definitions: MirroredDefinition[];
  /** One entry per setting (citizen and definition), by definisjonGuid then innbyggerFnr. */
  settings: MirrorEntry[];
}

/**
 * Where the copy lives. The default is a JSON file (JsonFileMirrorStore); a caller that wants its
 * own database implements these two methods. `save` must be atomic: the mirror acknowledges
 * events only after it returns.
 */
export interface MirrorStore {
  load(): Promise<MirrorState | undefined>;
  save(state: MirrorState): Promise<void>;
}

/** The copy as one JSON file, written through a temporary file and a rename (never half a file). */
export class JsonFileMirrorStore implements MirrorStore {
  constructor(readonly file: string) {}

  async load(): Promise<MirrorState | undefined> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const state = JSON.parse(text) as MirrorState;
    if (state.format !== MIRROR_FORMAT || !Array.isArray(state.settings)) {
      throw new Error(`${this.file} is not a privacy-mirror file (format ${MIRROR_FORMAT})`);
    }
    return state;
  }

  async save(state: MirrorState): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(state, null, 1)}\n`, { mode: 0o600 });
    await rename(tmp, this.file);
  }
}
