/**
 * An instant from the interface's date-time text. Text without an offset (a local-looking time or a
 * date alone) is read as UTC, never in the server's own time zone, so the result does not depend on
 * where the service runs.
 */
export function toInstant(text: string): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return new Date(`${text}T00:00:00Z`);
  const hasOffset = /(Z|[+-]\d{2}:?\d{2})$/i.test(text);
  return new Date(hasOffset ? text : `${text}Z`);
}

/** How far ahead of the server's clock a client may date a setting (clock skew). */
export const MAX_TIDSPUNKT_AHEAD_MS = 5 * 60 * 1000;
