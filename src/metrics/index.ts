export * from './cells.js';
export * from './gateway.js';
export * from './handler.js';
export * from './routes.js';
export * from './sip2.js';
