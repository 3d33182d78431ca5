export * from './rpc-method.decorator.js';
export * from './rpc-param.decorators.js';
