export { JsonRpcModule } from './json-rpc.module.js';
export { JsonRpcServer } from './json-rpc.server.js';
export {
  JSON_RPC_MODULE_OPTIONS,
  type JsonRpcModuleOptions,
  type JsonRpcModuleAsyncOptions,
  type JsonRpcSecurityOptions,
  type JsonRpcRedisOptions,
  type JsonRpcStreamOptions,
  type ResolvedJsonRpcOptions,
  type RolesMatch,
} from './json-rpc.options.js';
export * from './decorators/index.js';
export * from './errors/index.js';
export { RpcContext, getRpcContext } from './dispatch/rpc-context.js';
export { RpcStartupError } from './registry/rpc-method-explorer.js';
export type { RpcMethodDefinition } from './registry/rpc-method-definition.js';
export type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
export type { ParamViolation } from './params/param-violation.js';
export { RpcErrorCode, RpcErrorMessage } from './protocol/error-codes.js';
export type { RpcId, RpcErrorObject, RpcParamsValue } from './protocol/envelope.js';
export { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';
export { RpcThrottlerGuard } from './throttling/rpc-throttler.guard.js';
export { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from './throttling/rate-limit-bypass.js';
export { RpcMemoryThrottlerStorage } from './throttling/rpc-memory-throttler.storage.js';
export { RpcRedisThrottlerStorage } from './throttling/rpc-redis-throttler.storage.js';
export { RPC_THROTTLER_NAME } from './throttling/rpc-method-rate-limiter.js';
export { resolveEffectiveRoles, type EffectiveRoles, type RolesSource } from './security/effective-roles.js';
