export * from './rpc-exceptions.js';
export * from './exception-mapper.js';
