export {
  createShutdown,
  type CreateShutdownOptions,
  type InstallOptions,
  type Shutdown,
  type ShutdownStep,
} from './shutdown';
export {
  handleProcessErrors,
  loggableError,
  type FailingShutdown,
  type ProcessErrorPolicyOptions,
  type ProcessEvents,
} from './process-errors';
