export type * from './types.js';
export * from './account-state.js';
export * from './documents.js';
export * from './fees.js';
export * from './money.js';
export * from './parallel.js';
export * from './sip2-backend.js';
export * from './uris.js';
