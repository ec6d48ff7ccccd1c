export {
  createAppMetrics,
  registerScraped,
  type AppMetrics,
  type CreateAppMetricsOptions,
  type ScrapedMetricOptions,
  type ScrapedSample,
} from './app-metrics';
export { HTTP_DURATION_BUCKETS, HttpMetrics, RouteMetrics, UNMATCHED_ROUTE } from './http-metrics';
export { connectionGauges, type ConnectionChecks } from './connection-gauges';
export { readinessGauge } from './readiness-gauge';
export { outboxGauges, type OutboxBacklog, type OutboxGaugesOptions } from './outbox-gauges';
export { eventCounters, type EventCounters } from './event-counters';
export { METRICS_PATH, metricsHandler, metricsListener } from './serve';
export { boundedCounter, plainCounter, type BoundedCounter } from './counters';
