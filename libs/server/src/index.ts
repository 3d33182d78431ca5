// The public API of @nest-jsonrpc/server: what an app writes, nothing else. Names are a contract:
// extend, never rename. etc/server.api.md is the checked-in report of this surface
// (test/architecture/api-report.spec.ts fails when it changes without the report; docs/api-surface.md).

// The module and its options.
export { JsonRpcModule, type JsonRpcModuleAsyncOptions } from './json-rpc-module.js';
export { JsonRpcServer } from './json-rpc-server.js';
export type {
  JsonRpcModuleOptions,
  JsonRpcOptionsFactory,
  JsonRpcSecurityOptions,
  JsonRpcRedisOptions,
  JsonRpcStreamOptions,
  RolesMatch,
  RolesResolver,
  UserIdResolver,
} from './options/json-rpc-options.js';
export type { JsonRpcDurableOptions } from './options/durable-options.js';
export type { JsonRpcMcpOptions, JsonRpcMcpTasksOptions, McpFormatName } from './options/mcp-options.js';
export type { JsonRpcMcpAuthOptions, JsonRpcMcpJwtOptions } from './options/mcp-auth-options.js';
export type { JsonRpcOpenRpcOptions, JsonRpcOpenRpcInfo, JsonRpcExplorerOptions } from './options/openrpc-options.js';
export type { JsonRpcLimitsOptions } from './options/limits-options.js';
export type { JsonRpcRateLimitOptions, JsonRpcRateLimitPolicy } from './options/rate-limit-options.js';
export type { JsonRpcObservabilityOptions, RpcCallLogging } from './options/observability-options.js';

// Decorators and their options.
export {
  RpcMethod,
  type RpcMethodOptions,
  type RpcJsonSchema,
  type RpcDeclaredError,
  type RpcSignInOptions,
  type RpcMethodExplorerOptions,
} from './decorators/rpc-method.js';
export { RpcParams, RpcParam, RpcCtx, type RpcParamsOptions, type RpcParamOptions } from './decorators/rpc-params.js';
export { RpcStream, type RpcStreamOptions } from './decorators/rpc-stream.js';
export { RpcRateLimit, type RpcRateLimitOptions, type RpcLimitScope, type RpcRateLimitStoreErrorPolicy } from './decorators/rpc-rate-limit.js';
export { RpcCache, type RpcCacheOptions, type RpcCacheScope } from './decorators/rpc-cache.js';
export { RpcMcp, type RpcMcpOptions, type RpcMcpAnnotations, type RpcMcpFormat, type RpcMcpTaskSupport } from './decorators/rpc-mcp.js';
export type { RpcSchemaOutput, StandardSchemaV1, StandardTypedV1 } from './decorators/standard-schema.js';

// A call's context, and who is calling.
export { RpcContext, getRpcContext, type RpcTransport } from './context/rpc-context.js';

// Exceptions, and how anything thrown becomes an error object (an extension point).
export {
  RpcException,
  RpcBuiltinException,
  RpcParseErrorException,
  RpcInvalidRequestException,
  RpcMethodNotFoundException,
  RpcInvalidParamsException,
  RpcInternalErrorException,
  RpcAccessDeniedException,
  RpcNotFoundException,
  RpcRateLimitExceededException,
  RpcRequestTooLargeException,
  type RpcExceptionOptions,
  type RpcBuiltinExceptionOptions,
} from './errors/rpc-exceptions.js';
export { RpcExceptionMapper, type RpcErrorMapping } from './errors/rpc-exception-mapper.js';
export { formatRpcErrorText, type RpcErrorTextOptions } from './errors/rpc-error-text.js';
export { RpcStartupError } from './registry/rpc-method-explorer.js';
export type { RpcMethodDefinition } from './registry/rpc-method-definition.js';
export type { RpcMethodRegistry } from './registry/rpc-method-registry.js';
export type { RolesSource } from './security/effective-roles.js';

// Streams: what a stream handler returns.
export { resultChunks, type ResultChunksOptions, type ResultChunkSource, type ResultChunkPiece } from './streaming/result-chunks.js';

// Durable streams: the producer's helpers, the runner and access an app may inject, the stores.
export { progress, RpcProgress } from './durable/progress.js';
export { DurableRpcContext } from './durable/durable-rpc-context.js';
export { DurableStreamRunner } from './durable/durable-stream-runner.js';
export type { DurableEventIterator } from './durable/durable-event-iterator.js';
export { DurableStreamAccess, type DurableCaller, type DurableAccess } from './durable/durable-stream-access.js';
export type {
  StreamStore,
  AppendOutcome,
  CreateOutcome,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  DurableEventListener,
  DurableStreamRecord,
  StreamStoreHealth,
} from './stream-stores/stream-store.js';
export { MemoryStreamStore } from './stream-stores/memory-stream-store.js';
export { SqliteStreamStore, type SqliteStreamStoreOptions } from './stream-stores/sqlite-stream-store.js';
export { RedisStreamStore, type RedisStreamStoreOptions } from './stream-stores/redis-stream-store.js';

// The wire vocabulary a handler or a store names, from @nest-jsonrpc/protocol (the rest is there).
export {
  RpcErrorCode,
  StreamFormat,
  type RpcId,
  type RpcErrorObject,
  type RpcParamsValue,
  type ResultChunkRow,
  type DurableEventName,
  type DurableStreamEvent,
  type DurableStreamStatus,
  type DurableTerminalEventName,
} from '@nest-jsonrpc/protocol';

// Rate limits and cache: the extension points and the app's providers.
export { RpcThrottlerGuard } from './throttling/rpc-throttler-guard.js';
export { RPC_RATE_LIMIT_BYPASS, type RpcRateLimitBypass } from './throttling/rate-limit-bypass.js';
export { RpcCacheInvalidator } from './caching/rpc-cache-invalidator.js';

// The app's own methods as LLM tools.
export { RpcToolset, RpcToolError, type RpcTool, type RpcToolExecutionContext, type RpcToolsOptions } from './toolset/rpc-toolset.js';
export { rpcToolName } from './toolset/rpc-tool-name.js';
export type { JsonSchemaObject } from './schema/json-schema.js';

// Events a listener receives (`@OnEvent(JsonRpcEvent.*)`).
export {
  JsonRpcEvent,
  type RpcCallEventBase,
  type RpcCallSucceededEvent,
  type RpcCallFailedEvent,
  type RpcStreamEnding,
  type RpcStreamStartedEvent,
  type RpcStreamFinishedEvent,
  type RpcDurableStartedEvent,
  type RpcDurableFinishedEvent,
} from './observability/rpc-events.js';
