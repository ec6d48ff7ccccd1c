/**
 * A preload for tests that run an app as a child process
 * (`node --import tsx --import <processFaultsPreload> apps/<app>/src/main.ts`): on SIGUSR2 it lets
 * the fault named by TEST_PROCESS_FAULT escape every handler of the app, as a bug in a timer, an
 * event listener or a forgotten `await` would. The errors carry an identity number and a token
 * (FAULT_SECRETS), so a test can check the fatal line shows neither. Loaded by tests only; an app
 * never imports it.
 *
 * - programmer-rejection: a TypeError rejection nobody handles (with the secrets in its message and
 *   as properties).
 * - operational-rejection: a rejection with an operational AppError (a database outage).
 * - uncaught-exception: an Error thrown from a timer.
 */
import { AppError } from '@nhp/shared-errors';
import { FAULT_SECRETS } from './process-fault-secrets';

const { fnr, token } = FAULT_SECRETS;

process.on('SIGUSR2', () => {
  switch (process.env['TEST_PROCESS_FAULT']) {
    case 'programmer-rejection':
      void Promise.reject(
        Object.assign(
          new TypeError(
            `cannot read properties of undefined (reading 'aktiv') for ${fnr}; Authorization: Bearer ${token}`,
          ),
          { innbyggerFnr: fnr, token },
        ),
      );
      break;
    case 'operational-rejection':
      void Promise.reject(
        new AppError({
          code: 'DATABASE_UNAVAILABLE',
          status: 503,
          message: `the database cannot be reached (while reading ${fnr})`,
          category: 'unavailable',
        }),
      );
      break;
    case 'uncaught-exception':
      setTimeout(() => {
        throw new Error(`boom while answering ${fnr}`);
      }, 0);
      break;
  }
});
