export {
  createShutdown,
  type CreateShutdownOptions,
  type Shutdown,
  type ShutdownStep,
} from './shutdown';
