import { AppError, badRequest, payloadTooLarge, unsupportedMediaType } from '@nhp/shared-errors';

interface BodyParserError {
  type: string;
  status: number;
  limit?: number;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  const candidate = err as Partial<BodyParserError> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.type === 'string' &&
    typeof candidate.status === 'number' &&
    candidate.status >= 400 &&
    candidate.status < 500
  );
}

/**
 * Maps what Express and body-parser throw for a bad request onto AppErrors with messages of our
 * own (body-parser's parse message quotes the client's body). Returns undefined for anything that
 * is a bug or an outage: those become a 500.
 */
export function toClientError(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (isBodyParserError(err)) {
    switch (err.type) {
      case 'entity.parse.failed':
        return badRequest('MALFORMED_JSON', 'Request body is not valid JSON');
      case 'entity.too.large':
        return payloadTooLarge(
          'PAYLOAD_TOO_LARGE',
          `Request body is larger than ${err.limit === undefined ? 'the limit' : `${err.limit} bytes`}`,
        );
      case 'encoding.unsupported':
        return unsupportedMediaType(
          'UNSUPPORTED_CONTENT_ENCODING',
          'Content-Encoding is not supported',
        );
      case 'charset.unsupported':
        return unsupportedMediaType(
          'UNSUPPORTED_CHARSET',
          'Request body charset is not supported; send UTF-8',
        );
      default:
        return new AppError({
          code: 'BAD_REQUEST',
          status: err.status,
          message: 'The request could not be read',
        });
    }
  }
  // The router fails to decode a path parameter such as /items/%E0%A4%A.
  if (err instanceof URIError && (err as URIError & { status?: number }).status === 400) {
    return badRequest('MALFORMED_PATH', 'Request path contains a malformed percent-encoding');
  }
  return undefined;
}
