// The public API of @nest-jsonrpc/server (DESIGN §3). Names are a contract: extend, never rename.
export { JsonRpcModule, type JsonRpcModuleAsyncOptions } from './json-rpc.module.js';
export { JsonRpcServer } from './json-rpc.server.js';
export {
  JSON_RPC_MODULE_OPTIONS,
  type JsonRpcModuleOptions,
  type JsonRpcOptionsFactory,
  type JsonRpcSecurityOptions,
  type JsonRpcRedisOptions,
  type JsonRpcStreamOptions,
  type ResolvedJsonRpcOptions,
  type RolesMatch,
  type RolesResolver,
  type UserIdResolver,
} from './options/json-rpc-options.js';
export { DEFAULT_STREAM_HEADERS } from './options/stream-options.js';
export type { JsonRpcDurableOptions, ResolvedDurableOptions } from './options/durable-options.js';
export { DEFAULT_MCP_ALLOWED_HOSTS, type JsonRpcMcpOptions, type ResolvedMcpOptions, type McpFormatName } from './options/mcp-options.js';
export type {
  JsonRpcOpenRpcOptions,
  JsonRpcOpenRpcInfo,
  JsonRpcExplorerOptions,
  ResolvedOpenRpcOptions,
  ResolvedExplorerOptions,
} from './options/openrpc-options.js';
export type { JsonRpcLimitsOptions, ResolvedLimitsOptions } from './options/limits-options.js';
export type { JsonRpcRateLimitOptions } from './options/rate-limit-options.js';
export * from './decorators/index.js';
export * from './errors/index.js';
export { RpcContext, getRpcContext, type RpcTransport } from './context/rpc-context.js';
export { RpcStartupError } from './registry/rpc-method-explorer.js';
export type { RpcMethodDefinition } from './registry/rpc-method-definition.js';
export type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
export { RpcPipeline, type RpcResolvedCall } from './pipeline/rpc-pipeline.js';
export type { ParamViolation } from './params/param-violation.js';

// Describing the API (issue 10): rpc.discover, the document's types, the GET route (subclassable).
export { RPC_DISCOVER } from './openrpc/openrpc-discovery.js';
export { OpenRpcHttpRoutes } from './openrpc/openrpc-http-routes.js';
export { OPENRPC_DOCUMENT_CACHE_SIZE } from './openrpc/openrpc-documents.js';
export { ExplorerPageRoutes, EXPLORER_CONTENT_SECURITY_POLICY } from './explorer/explorer-page-routes.js';
export type {
  OpenRpcDocument,
  OpenRpcMethod,
  OpenRpcInfo,
  OpenRpcServer,
  OpenRpcError,
  OpenRpcContentDescriptor,
  OpenRpcStreamExtension,
} from './openrpc/openrpc-document.js';

// Durable streams: the stores, the runner, the producer's helpers.
export * from './durable/index.js';
export type {
  StreamStore,
  AppendOutcome,
  CreateOutcome,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  DurableEventListener,
  DurableStreamRecord,
} from './stream-stores/stream-store.js';
export { MemoryStreamStore } from './stream-stores/memory-stream-store.js';
export { SqliteStreamStore, type SqliteStreamStoreOptions } from './stream-stores/sqlite-stream-store.js';
export { RedisStreamStore, type RedisStreamStoreOptions } from './stream-stores/redis-stream-store.js';

// The wire vocabulary, shared with the client through @nest-jsonrpc/protocol.
export {
  RpcErrorCode,
  RpcErrorMessage,
  isRpcErrorCode,
  isReservedMethodName,
  StreamFormat,
  encodeSseEvent,
  encodeSseRetry,
  encodeErrorRow,
  encodeErrorObject,
  frameEncoderFor,
  ndjsonEncoder,
  sseEncoder,
  jsonArrayEncoder,
  serializeStreamRow,
  SSE_KEEP_ALIVE,
  SSE_END_FRAME,
  INTERRUPTED_EVENT_DATA,
  type RpcId,
  type RpcErrorObject,
  type RpcParamsValue,
  type SseEventFields,
  type StreamFrameEncoder,
  type DurableEventName,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
  type DurableStartAnswer,
  type ResultChunkRow,
  type ResultChunkEncoding,
} from '@nest-jsonrpc/protocol';
export {
  resultChunks,
  DEFAULT_RESULT_CHUNK_SIZE,
  type ResultChunksOptions,
  type ResultChunkSource,
  type ResultChunkPiece,
} from './streaming/result-chunks.js';

// Roles, limits, cache.
export { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';
export { RpcThrottlerGuard } from './throttling/rpc-throttler.guard.js';
export { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from './throttling/rate-limit-bypass.js';
export { RpcMemoryThrottlerStorage } from './throttling/rpc-memory-throttler.storage.js';
export { RpcRedisThrottlerStorage } from './throttling/rpc-redis-throttler.storage.js';
export { RPC_THROTTLER_NAME } from './throttling/rpc-method-rate-limiter.js';
export { resolveEffectiveRoles, type EffectiveRoles, type RolesSource } from './security/effective-roles.js';

// The app's own methods as LLM tools (issue 12).
export * from './toolset/index.js';

export * from './deprecated-aliases.js';
export * from './observability/index.js';
export type { JsonRpcObservabilityOptions, ResolvedObservabilityOptions, RpcCallLogging } from './options/observability-options.js';
