export { JsonRpcModule } from './json-rpc.module.js';
export { JsonRpcServer } from './json-rpc.server.js';
export {
  JSON_RPC_MODULE_OPTIONS,
  type JsonRpcModuleOptions,
  type JsonRpcModuleAsyncOptions,
  type JsonRpcSecurityOptions,
  type JsonRpcRedisOptions,
  type JsonRpcStreamOptions,
  DEFAULT_STREAM_HEADERS,
  type ResolvedJsonRpcOptions,
  type RolesMatch,
} from './json-rpc.options.js';
export * from './decorators/index.js';
export * from './errors/index.js';
export { RpcContext, getRpcContext } from './dispatch/rpc-context.js';
export { RpcStartupError } from './registry/rpc-method-explorer.js';
export type { RpcMethodDefinition } from './registry/rpc-method-definition.js';
export type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
export * from './durable/index.js';
export type { ParamViolation } from './params/param-violation.js';
export { RpcErrorCode, RpcErrorMessage } from './protocol/error-codes.js';
export type { RpcId, RpcErrorObject, RpcParamsValue } from './protocol/envelope.js';
export {
  resultChunks,
  DEFAULT_RESULT_CHUNK_SIZE,
  type ResultChunkRow,
  type ResultChunksOptions,
  type ResultChunkEncoding,
  type ResultChunkSource,
  type ResultChunkPiece,
} from './streaming/result-chunks.js';
export {
  encodeSseEvent,
  encodeErrorRow,
  frameEncoderFor,
  ndjsonEncoder,
  sseEncoder,
  jsonArrayEncoder,
  SSE_KEEP_ALIVE,
  SSE_END_FRAME,
  type SseEventFields,
  type StreamFrameEncoder,
} from './streaming/frame-encoders.js';
export { serializeStreamRow } from './streaming/row-serializer.js';
export { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';
export { RpcThrottlerGuard } from './throttling/rpc-throttler.guard.js';
export { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from './throttling/rate-limit-bypass.js';
export { RpcMemoryThrottlerStorage } from './throttling/rpc-memory-throttler.storage.js';
export { RpcRedisThrottlerStorage } from './throttling/rpc-redis-throttler.storage.js';
export { RPC_THROTTLER_NAME } from './throttling/rpc-method-rate-limiter.js';
export { resolveEffectiveRoles, type EffectiveRoles, type RolesSource } from './security/effective-roles.js';
