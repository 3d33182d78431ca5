export * from './rpc-exceptions.js';
export * from './rpc-exception-mapper.js';
export * from './rpc-error-text.js';
