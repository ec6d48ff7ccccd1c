import { resolve } from 'node:path';

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
export { composeNodeOptions, composeService, type ComposeService } from './compose';
export { freePort } from './free-port';
export { monitoredConnection } from './monitored-connection';
export { LogCapture } from './log-capture';
export {
  startNatsCluster,
  type Jsz,
  type NatsCluster,
  type NatsClusterNode,
  type StartNatsClusterOptions,
} from './nats-cluster';
export { FAULT_SECRETS } from './process-fault-secrets';
export {
  startAppProcess,
  type AppExit,
  type AppProcess,
  type StartAppProcessOptions,
} from './app-process';
export { waitFor, type WaitForOptions } from './wait-for';
export { present } from './present';
export { Scrape, scrapeMetrics, type ScrapedHistogram } from './scrape';
export { AsyncApiContract, asyncApiProblems, type CapturedMessage } from './asyncapi';

/**
 * The path of a preload that makes a fault escape every handler on SIGUSR2 (TEST_PROCESS_FAULT:
 * programmer-rejection, operational-rejection, uncaught-exception); see process-faults.ts.
 */
export const processFaultsPreload = resolve(__dirname, 'process-faults.ts');
export {
  recordSpans,
  sensitiveAttributes,
  startOtlpReceiver,
  type OtlpReceiver,
  type RecordedSpan,
  type SpanRecorder,
} from './tracing';
