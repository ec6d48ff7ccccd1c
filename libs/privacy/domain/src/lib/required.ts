import { privacyErrors } from './errors';

/** A field the interface leaves optional but the operation cannot do without: 400 EPVK-100400. */
export function required<T>(value: T | null | undefined, path: string): T {
  if (value === undefined || value === null) {
    throw privacyErrors.validation(`Invalid request: body.${path}: required`, [
      { location: 'body', path, message: 'required' },
    ]);
  }
  return value;
}
