import { z } from 'zod';

/** ErrorResponse.errorCategory, as the interface enumerates it. */
export const PRIVACY_ERROR_CATEGORIES = [
  'Unknown',
  'SessionExpired',
  'ClientValidationError',
  'ServerValidationError',
  'DataMappingError',
  'EndpointIsDown',
  'ConfigError',
  'EndpointUnknownError',
  'Critical',
] as const;

export const errorCategorySchema = z.enum(PRIVACY_ERROR_CATEGORIES).meta({ id: 'ErrorCategory' });

/** The body of every error response. The service always sends all three fields. */
export const errorResponseSchema = z
  .strictObject({
    code: z.string().nullable().meta({ description: 'Stable error code, e.g. EPVK-100400.' }),
    message: z.string().nullable().meta({ description: 'What went wrong, in words.' }),
    errorCategory: errorCategorySchema,
  })
  .meta({ id: 'ErrorResponse', description: 'The body of every error response.' });

export type PrivacyErrorCategory = z.infer<typeof errorCategorySchema>;
export type ErrorResponse = z.infer<typeof errorResponseSchema>;
