import { Writable } from 'node:stream';
import type { Express } from 'express';
import { createHttpApp, type ErrorFormatter } from '@nhp/shared-http';
import { createLogger, type Logger } from '@nhp/shared-logger';
import {
  callerOf,
  createPrivacyAuth,
  requireCitizen,
  requireScope,
  type PrivacyAuth,
  type PrivacyAuthOptions,
} from '../src';

/** The body privacy-api's formatter would build from, minus its vocabulary: code and neutral category. */
const testFormatter: ErrorFormatter = (err) => ({
  status: err.status,
  contentType: 'application/json',
  body: { code: err.code, category: err.category, message: err.message },
});

export interface LogCapture {
  logger: Logger;
  text(): string;
}

/** A debug-level logger whose lines the test can read (to prove no credential reaches them). */
export function captureLogs(): LogCapture {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  const logger = createLogger({ name: 'privacy-auth-test', level: 'debug', destination });
  return { logger, text: () => lines.join('') };
}

/**
 * An app with the routes privacy-api's kinds of operation have: any authenticated caller, a
 * read operation refusing with 401, an admin operation refusing with 403, a citizen operation.
 */
export function testApp(
  options: PrivacyAuthOptions,
  extras: { trustProxy?: boolean } = {},
): { app: Express; auth: PrivacyAuth } {
  const auth = createPrivacyAuth(options);
  const app = createHttpApp({
    logger: options.logger ?? createLogger({ name: 'privacy-auth-test', level: 'silent' }),
    errorFormatter: testFormatter,
    trustProxy: extras.trustProxy,
    routes: (a) => {
      const whoami = (req: Parameters<typeof callerOf>[0], res: import('express').Response) => {
        const caller = callerOf(req);
        res.json({
          clientId: caller.clientId ?? null,
          scopes: [...caller.scopes],
          citizen: caller.pid !== undefined,
          pidMatches: req.get('x-expect-pid') === caller.pid,
          scheme: caller.scheme,
          read: caller.has('read'),
          write: caller.has('write'),
          admin: caller.has('admin'),
        });
      };
      a.get('/whoami', auth.authenticate, whoami);
      a.post('/whoami', auth.authenticate, whoami);
      a.get('/base/path/whoami', auth.authenticate, whoami);
      a.get('/read', auth.authenticate, requireScope('read', 401), whoami);
      a.post('/admin', auth.authenticate, requireScope('admin', 403), whoami);
      a.post('/citizen', auth.authenticate, requireCitizen(403), whoami);
      a.get('/forgot-authenticate', whoami);
    },
  });
  return { app, auth };
}
