export {};
export {
  canonicalInkluderingType,
  INKLUDERING_TYPES,
  inkluderingTypeInputSchema,
  inkluderingTypeSchema,
  settInkluderingRequestSchema,
  settInkluderingResponseSchema,
  type InkluderingType,
  type SettInkluderingRequest,
  type SettInkluderingResponse,
} from './lib/inclusions';
export {
  FORELDRE_TYPE,
  hentRepresentasjonsforholdResponseSchema,
  representasjonsforholdSchema,
  representationImportLineSchema,
  tilleggsinfoSchema,
  type HentRepresentasjonsforholdResponse,
  type Representasjonsforhold,
  type RepresentationImportLine,
  type Tilleggsinfo,
} from './lib/representation';
export * from './lib/settings';
