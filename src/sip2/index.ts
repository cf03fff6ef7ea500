export * from './charset.js';
export * from './checksum.js';
export * from './codec.js';
export * from './date.js';
export * from './errors.js';
export * from './framer.js';
export * from './spec.js';
