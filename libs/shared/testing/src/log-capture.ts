import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@nhp/shared-logger';

/**
 * A real service logger (with its redaction) writing to memory: tests read the lines as parsed
 * JSON objects to check what is, and is not, logged.
 */
export class LogCapture {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly raw: string[] = [];
  readonly logger: Logger;

  constructor(level = 'debug', name = 'test') {
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (!line.trim()) continue;
          this.raw.push(line);
          this.lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    });
    this.logger = createLogger({ name, level, destination: sink });
  }
}
