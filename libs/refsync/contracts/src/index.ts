export * from './lib/item-data';
export * from './lib/envelopes';
export * from './lib/problem-details';
export * from './lib/events';
export * from './lib/api-keys';
