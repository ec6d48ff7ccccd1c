import { commonEnvShape, envPort } from '@nhp/shared-config';
import { z } from 'zod';

/** privacy-api's environment; every variable is documented in .env.example. */
export const privacyApiConfigSchema = z.object({
  ...commonEnvShape,
  PRIVACY_API_PORT: envPort(3001),
  PRIVACY_API_HOST: z.string().min(1).default('0.0.0.0'),
});

export type PrivacyApiConfig = z.infer<typeof privacyApiConfigSchema>;
