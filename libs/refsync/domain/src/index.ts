export * from './lib/since-version';
export * from './lib/canonical-json';
export * from './lib/change-set';
export * from './lib/mass-deletion';
export * from './lib/response-order';
