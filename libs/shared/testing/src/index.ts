export { startTestInfra, useTestInfra, withDatabase, type TestInfra } from './infra';
export {
  NatsServerNotFoundError,
  startNatsServer,
  type NatsServerProcess,
  type StartNatsServerOptions,
} from './nats-server';
export {
  startMongoServerProcess,
  type MongoServerProcess,
  type StartMongoServerProcessOptions,
} from './mongo-process';
export { freePort } from './free-port';
export { LogCapture } from './log-capture';
export {
  startNatsCluster,
  type Jsz,
  type NatsCluster,
  type NatsClusterNode,
  type StartNatsClusterOptions,
} from './nats-cluster';
