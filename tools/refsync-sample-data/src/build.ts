import type {
  CodedConcept,
  MedicineReference,
  ReimbursementGroupData,
  TreatmentGroupData,
} from '@nhp/refsync-contracts';
import { CODE_SYSTEMS, CONDITIONS, LEGAL_BASIS, type ConditionKey, type Substance } from './codes';
import type { Random } from './random';
import type { TherapeuticGroup } from './treatment-catalog';

export const MEDICINE_TYPE = 'Legemiddelpakning';

export function codedConcept(system: string, code: string, display: string): CodedConcept {
  return { coding: [{ system, code, display }] };
}

export function legalBasis(code: string): CodedConcept {
  const display = LEGAL_BASIS[code];
  if (!display) throw new Error(`unknown legal basis code ${code}`);
  return codedConcept(CODE_SYSTEMS.legalBasis, code, display);
}

/** §2 (pre-approved) dominates in FEST; the individual-application paragraphs are rarer. */
export function pickLegalBasisCode(random: Random, first: boolean): string {
  if (first || random.chance(0.55)) return '200';
  return random.pick(['300', '301', '302', '400', '500', '600']);
}

/** Each condition as an ICPC-2 concept and, mostly, also as an ICD-10 concept. */
export function indications(random: Random, conditions: readonly ConditionKey[]): CodedConcept[] {
  const out: CodedConcept[] = [];
  for (const key of conditions) {
    const condition = CONDITIONS[key];
    out.push(codedConcept(CODE_SYSTEMS.icpc2, condition.icpc2[0], condition.icpc2[1]));
    if (random.chance(0.75))
      out.push(codedConcept(CODE_SYSTEMS.icd10, condition.icd10[0], condition.icd10[1]));
  }
  return out;
}

const PACKS: Array<[RegExp, readonly string[]]> = [
  [/\b(inj|depotinj)\b/, ['1 stk', '5 × 3 ml', '10 × 3 ml', '2 × 1 ml', '4 stk']],
  [/\binh\./, ['1 stk', '3 × 1 stk', '60 doser', '120 doser']],
  [/\b(øyedr|mikst)\b/, ['2,5 ml', '5 ml', '3 × 2,5 ml', '500 ml']],
  [/\b(krem|salve|gel)\b/, ['30 g', '100 g']],
  [/\bplaster\b/, ['5 stk', '10 stk']],
  [/\bpulv\b/, ['30 dosepos', '100 dosepos']],
];
const SOLID_PACKS = ['28 stk', '30 stk', '98 stk', '100 stk', '14 stk'];

export function packFor(random: Random, product: string): string {
  const match = PACKS.find(([pattern]) => pattern.test(product));
  return random.pick(match ? match[1] : SOLID_PACKS);
}

/** FEST-style object id, e.g. ID_3B0D3C1E-56A2-4F0B-9C1D-2E3F4A5B6C7D. */
export function festId(random: Random): string {
  return `ID_${random.hex(8)}-${random.hex(4)}-${random.hex(4)}-${random.hex(4)}-${random.hex(12)}`;
}

export function medicine(random: Random, product: string, varenummer: string): MedicineReference {
  return {
    reference: random.chance(0.8) ? `Legemiddelpakning/${festId(random)}` : null,
    type: MEDICINE_TYPE,
    identifier: { system: CODE_SYSTEMS.varenummer, value: varenummer },
    display: random.chance(0.95) ? `${product}, ${packFor(random, product)}` : null,
  };
}

/** A 6-digit varenummer. */
export function randomVarenummer(random: Random): string {
  return String(random.int(10_000, 599_999)).padStart(6, '0');
}

export interface ReimbursementGroupOptions {
  /** Returns the varenummer of the next package (lets the sample keep them unique). */
  nextVarenummer(): string;
  /** Share of groups without any article number upstream (medicines: []). */
  emptyMedicinesShare?: number;
}

/** Group `n` (1-based) of a substance: id `<ATC>_<n>`, as the 7451 group numbers are formed. */
export function reimbursementGroup(
  random: Random,
  substance: Substance,
  n: number,
  options: ReimbursementGroupOptions,
): ReimbursementGroupData {
  const primary = substance.conditions[(n - 1) % substance.conditions.length];
  const conditions: ConditionKey[] = [primary];
  const other = random.pick(substance.conditions);
  if (other !== primary && random.chance(0.35)) conditions.push(other);

  const medicines: MedicineReference[] = [];
  if (!random.chance(options.emptyMedicinesShare ?? 0.06)) {
    const count = random.int(1, Math.min(4, substance.products.length + 2));
    for (let i = 0; i < count; i += 1) {
      medicines.push(
        medicine(
          random,
          substance.products[i % substance.products.length],
          options.nextVarenummer(),
        ),
      );
    }
  }
  return {
    id: `${substance.atc}_${n}`,
    legalBasis: legalBasis(pickLegalBasisCode(random, n === 1)),
    indications: indications(random, conditions),
    medicines,
  };
}

/** A treatment group with the extra upstream fields real feeds carry. */
export function treatmentGroup(
  random: Random,
  group: TherapeuticGroup,
  id: string,
  name = group.name,
): TreatmentGroupData {
  const year = random.int(2012, 2025);
  const month = String(random.int(1, 12)).padStart(2, '0');
  const data: TreatmentGroupData = {
    id,
    name,
    description: `${name}. Terapiområde: ${group.area.toLowerCase()}.`,
    atcCodes: [group.atc],
    therapeuticArea: group.area,
    validFrom: `${year}-${month}-01`,
    validTo: null,
  };
  if (random.chance(0.3)) {
    data['atcCodes'] = [group.atc, `${group.atc}${random.pick(['A', 'B', 'C', 'X'])}`];
  }
  if (random.chance(0.2)) {
    data['responsible'] = { organisation: 'Helsedirektoratet', unit: 'Avdeling legemidler' };
  }
  return data;
}
