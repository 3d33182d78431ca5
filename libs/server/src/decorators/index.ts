export * from './rpc-method.decorator.js';
export * from './rpc-param.decorators.js';
export * from './rpc-stream.decorator.js';
export * from './rpc-rate-limit.decorator.js';
export * from './rpc-cache.decorator.js';
export * from './rpc-mcp.decorator.js';
