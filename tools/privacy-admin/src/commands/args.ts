import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './command';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util's parser, strict (unknown options and stray words are usage errors). */
export function parseOptions<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** A value that must be given and non-blank. */
export function requiredValue(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`${name} is required`);
  }
  return value.trim();
}
