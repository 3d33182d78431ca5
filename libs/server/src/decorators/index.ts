export * from './rpc-method.decorator.js';
export * from './rpc-param.decorators.js';
export * from './rpc-stream.decorator.js';
