export * from './error-codes.js';
export * from './envelope.js';
export * from './response.js';
export * from './http-status.js';
export * from './json-text.js';
