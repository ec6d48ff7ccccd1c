export { startTestInfra, useTestInfra, withDatabase, type TestInfra } from './infra';
export { NatsServerNotFoundError, startNatsServer, type NatsServerProcess } from './nats-server';
