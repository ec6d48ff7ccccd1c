export {
  createHealth,
  type CreateHealthOptions,
  type Health,
  type HealthCheck,
  type HealthCheckSpec,
  type Readiness,
} from './health';
export { healthRouter, type HealthRouterOptions } from './health-router';
