import {
  FORELDRE_TYPE,
  representationImportLineSchema,
  type Tilleggsinfo,
} from '@nhp/privacy-contracts';
import { ageOn, isValidFnr, parseFnr } from '../fnr';

/** One relationship of a caller (the caller's fnr is the key it is stored under). */
export interface RepresentationRelationship {
  /** The other person (personal data: never log). */
  annenFnr: string;
  eksternProfilGuid: string;
  fornavn: string;
  mellomnavn: string | null;
  etternavn: string;
  representasjonsforholdType: string;
  annenAdresse: boolean;
}

export interface RepresentationLookup {
  /** The caller's relationships; none is an empty list. */
  findRelationships(fnr: string): Promise<RepresentationRelationship[]>;
}

const isForeldre = (r: RepresentationRelationship) =>
  r.representasjonsforholdType.toLowerCase() === FORELDRE_TYPE;

/**
 * Computed at request time from the children's identity numbers. "Over 11" counts from the 11th
 * birthday itself (age in whole years ≥ 11, UTC calendar days as `ageOn` counts them); a child
 * whose number carries no readable birth date counts as neither.
 */
export function tilleggsinfoOf(
  relationships: RepresentationRelationship[],
  today: Date,
): Tilleggsinfo {
  const children = relationships.filter(isForeldre);
  const ages = children.flatMap((child) => {
    const parsed = parseFnr(child.annenFnr, { allowSynthetic: true });
    return parsed ? [ageOn(parsed.birthDate, today)] : [];
  });
  return {
    harBarnMedAnnenAdresse: children.some((child) => child.annenAdresse),
    harBarnOver11: ages.some((age) => age >= 11),
    harBarnOver16: ages.some((age) => age >= 16),
  };
}

export interface ImportLineError {
  /** 1-based line number in the file. */
  line: number;
  /** What is wrong, naming fields but never their values (they hold identity numbers). */
  message: string;
}

/** A caller's list is one document: this bound keeps it far below MongoDB's 16 MiB. */
export const MAX_RELATIONSHIPS_PER_CALLER = 1000;

export type RepresentationImport =
  | { ok: true; byFnr: Map<string, RepresentationRelationship[]>; lines: number }
  | { ok: false; errors: ImportLineError[] };

function issuesOf(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  return error.issues
    .map((issue) => `${issue.path.map(String).join('.') || '(line)'}: ${issue.message}`)
    .join('; ');
}

/**
 * Reads an import file (NDJSON: one relationship a line; blank lines ignored) completely before
 * anything is applied: every bad line is reported by its number, and one bad line fails the file.
 * A line repeating a relationship of the same caller (same other person and type) is bad too.
 */
export function parseRepresentationImport(
  text: string,
  options: { allowSyntheticIds: boolean },
): RepresentationImport {
  const errors: ImportLineError[] = [];
  const byFnr = new Map<string, RepresentationRelationship[]>();
  const seen = new Set<string>();
  let lines = 0;
  const fnrOptions = { allowSynthetic: options.allowSyntheticIds };

  text
    .replace(/^\uFEFF/, '')
    .split('\n')
    .forEach((raw, index) => {
      const line = index + 1;
      const content = raw.trim();
      if (content === '') return;
      let json: unknown;
      try {
        json = JSON.parse(content);
      } catch {
        errors.push({ line, message: 'not valid JSON' });
        return;
      }
      const parsed = representationImportLineSchema.safeParse(json);
      if (!parsed.success) {
        errors.push({ line, message: issuesOf(parsed.error) });
        return;
      }
      const value = parsed.data;
      const bad: string[] = [];
      if (!isValidFnr(value.fnr, fnrOptions)) bad.push('fnr: not a valid national identity number');
      if (!isValidFnr(value.annenFnr, fnrOptions)) {
        bad.push('annenFnr: not a valid national identity number');
      }
      if (bad.length === 0 && value.fnr === value.annenFnr) bad.push('annenFnr: equals fnr');
      const key = JSON.stringify([
        value.fnr,
        value.annenFnr,
        value.representasjonsforholdType.toLowerCase(),
      ]);
      if (bad.length === 0 && seen.has(key)) {
        bad.push('repeats an earlier line (same fnr, annenFnr and representasjonsforholdType)');
      }
      if (bad.length === 0 && (byFnr.get(value.fnr)?.length ?? 0) >= MAX_RELATIONSHIPS_PER_CALLER) {
        bad.push(`more than ${MAX_RELATIONSHIPS_PER_CALLER} relationships for this fnr`);
      }
      if (bad.length > 0) {
        errors.push({ line, message: bad.join('; ') });
        return;
      }
      seen.add(key);
      lines += 1;
      const relationship: RepresentationRelationship = {
        annenFnr: value.annenFnr,
        eksternProfilGuid: value.eksternProfilGuid,
        fornavn: value.fornavn,
        mellomnavn: value.mellomnavn ?? null,
        etternavn: value.etternavn,
        representasjonsforholdType: value.representasjonsforholdType,
        annenAdresse:
          typeof value.annenAdresse === 'string'
            ? value.annenAdresse.trim() !== ''
            : value.annenAdresse === true,
      };
      const list = byFnr.get(value.fnr);
      if (list) list.push(relationship);
      else byFnr.set(value.fnr, [relationship]);
    });

  return errors.length > 0 ? { ok: false, errors } : { ok: true, byFnr, lines };
}
