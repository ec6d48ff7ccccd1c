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
export {
  emptyObjectSchema,
  guidSchema,
  int32Schema,
  nullableString,
  type EmptyObject,
} from './lib/common';
export {
  errorCategorySchema,
  errorResponseSchema,
  PRIVACY_ERROR_CATEGORIES,
  type ErrorResponse,
  type PrivacyErrorCategory,
} from './lib/error-response';
export {
  PART_KODE_PATTERN,
  partKodeSchema,
  partRequestSchema,
  type PartRequest,
} from './lib/parts';
export {
  createDefinitionRequestSchema,
  DEFINITION_STATUS_PATTERN,
  hentInnstillingDefinisjonerQuerySchema,
  hentInnstillingDefinisjonerResponseSchema,
  innstillingDefinisjonSchema,
  relasjonSchema,
  updateDefinitionRequestSchema,
  type CreateDefinitionRequest,
  type HentInnstillingDefinisjonerQuery,
  type HentInnstillingDefinisjonerResponse,
  type InnstillingDefinisjon,
  type RelasjonRequest,
  type UpdateDefinitionRequest,
} from './lib/definitions';
export {
  buildOpenApiDocument,
  REQUEST_MEDIA_TYPES,
  type HttpMethod,
  type OpenApiInfo,
  type OperationSpec,
  type QueryParameterSpec,
} from './lib/openapi';
