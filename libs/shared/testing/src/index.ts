export { startTestInfra, useTestInfra, withDatabase, type TestInfra } from './infra';
export {
  NatsServerNotFoundError,
  startNatsServer,
  type NatsServerProcess,
  type StartNatsServerOptions,
} from './nats-server';
export { freePort } from './free-port';
export { LogCapture } from './log-capture';
