import type { IncomingHttpHeaders } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { badRequest } from '@nhp/shared-errors';

export interface RequestSchemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  headers?: z.ZodType;
}

type Parsed<S, K extends keyof RequestSchemas, Raw> = S extends {
  [P in K]: infer T extends z.ZodType;
}
  ? z.infer<T>
  : Raw;

/** What the handler receives: parsed values where a schema was given, the raw request values elsewhere. */
export interface ValidatedInput<S extends RequestSchemas> {
  body: Parsed<S, 'body', unknown>;
  query: Parsed<S, 'query', unknown>;
  params: Parsed<S, 'params', Record<string, string>>;
  headers: Parsed<S, 'headers', IncomingHttpHeaders>;
}

/** One problem with the request, as the client sees it: `errors` in problem details. */
export interface ValidationIssue {
  /** body, query, params or headers. */
  location: keyof RequestSchemas;
  /** Dotted path inside that location, e.g. "relasjoner[0].partKode"; "" for the whole value. */
  path: string;
  message: string;
}

export const VALIDATION_FAILED = 'VALIDATION_FAILED';

const MAX_ISSUES_IN_MESSAGE = 5;

function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === 'number') return `${text}[${key}]`;
    return text ? `${text}.${String(key)}` : String(key);
  }, '');
}

/**
 * The message repeats the first issues in words because some error bodies (privacy-api's
 * ErrorResponse) have no field for structured details.
 */
function summarise(issues: ValidationIssue[]): string {
  const shown = issues
    .slice(0, MAX_ISSUES_IN_MESSAGE)
    .map((issue) => `${issue.location}${issue.path ? `.${issue.path}` : ''}: ${issue.message}`);
  const more =
    issues.length > MAX_ISSUES_IN_MESSAGE
      ? ` (and ${issues.length - MAX_ISSUES_IN_MESSAGE} more)`
      : '';
  return `Invalid request: ${shown.join('; ')}${more}`;
}

const LOCATIONS = ['params', 'query', 'headers', 'body'] as const;

/**
 * Validates the parts of a request that have a schema and calls `handler` with the parsed (and
 * coerced) values. Every invalid part is reported at once, as a 400 AppError VALIDATION_FAILED.
 *
 * Express 5 makes `req.query` a getter that re-parses the URL, so assigning parsed values back onto
 * the request is impossible for query and misleading for the rest; parsed values travel only as
 * the handler's `input`, and `req` stays as it came. A handler that throws or rejects is passed on
 * by Express 5 to the central error handler.
 */
export function validate<S extends RequestSchemas>(
  schemas: S,
  handler: (input: ValidatedInput<S>, req: Request, res: Response) => Promise<void> | void,
): RequestHandler {
  return async (req, res) => {
    const raw = {
      body: req.body as unknown,
      query: req.query,
      params: req.params,
      headers: req.headers,
    };
    const input: Record<string, unknown> = { ...raw };
    const issues: ValidationIssue[] = [];

    for (const location of LOCATIONS) {
      const schema = schemas[location];
      if (!schema) continue;
      const result = await schema.safeParseAsync(raw[location]);
      if (result.success) {
        input[location] = result.data;
      } else {
        for (const issue of result.error.issues) {
          issues.push({ location, path: formatPath(issue.path), message: issue.message });
        }
      }
    }

    if (issues.length > 0) throw badRequest(VALIDATION_FAILED, summarise(issues), issues);
    await handler(input as unknown as ValidatedInput<S>, req, res);
  };
}
