import { z } from 'zod';

export const problemFieldErrorSchema = z
  .object({
    path: z.string().meta({ description: 'Where the problem is, e.g. "query.sinceVersion".' }),
    message: z.string(),
  })
  .meta({ id: 'ProblemFieldError', description: 'One invalid input and why.' });
export type ProblemFieldError = z.infer<typeof problemFieldErrorSchema>;

/**
 * RFC 9457 problem details. Loose because the RFC allows extension members; `code` and `errors`
 * are the two this service uses.
 */
export const problemDetailsSchema = z
  .looseObject({
    type: z.string().meta({ description: 'A URI reference identifying the problem type.' }),
    title: z.string(),
    status: z.int().min(100).max(599),
    detail: z.string(),
    instance: z
      .string()
      .meta({ description: 'The request path this problem occurred on (never the query string).' }),
    code: z.string().optional().meta({ description: 'A stable machine-readable error code.' }),
    errors: z.array(problemFieldErrorSchema).optional(),
  })
  .meta({
    id: 'ProblemDetails',
    description: 'An error, as RFC 9457 problem details (application/problem+json).',
  });
export type ProblemDetails = z.infer<typeof problemDetailsSchema>;
