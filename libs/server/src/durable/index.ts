export { progress, RpcProgress } from './progress.js';
export type {
  DurableEventName,
  DurableStreamEvent,
  DurableStreamRecord,
  DurableStreamStatus,
  DurableTerminalEventName,
} from './durable-event.js';
export type {
  StreamStore,
  AppendOutcome,
  CreateOutcome,
  LookupOutcome,
  NewDurableStream,
  PendingDurableEvent,
  DurableEventListener,
} from './stream-store.js';
export { MemoryStreamStore } from './memory-stream-store.js';
export { SqliteStreamStore, type SqliteStreamStoreOptions } from './sqlite-stream-store.js';
export { RedisStreamStore, type RedisStreamStoreOptions } from './redis-stream-store.js';
export { DurableStreamService, type DurableStartAnswer } from './durable-stream.service.js';
export { DurableRpcContext } from './durable-rpc-context.js';
export type { JsonRpcDurableOptions, ResolvedDurableOptions } from './durable-options.js';
export { sseEventFrame, sseEventFrames, sseRetryFrame, SSE_KEEP_ALIVE_FRAME } from './sse-event-format.js';
