import type { RpcResolvedCall } from './rpc-resolved-call.js';

/** What `RpcPipeline.run` does for one call when nothing observes it. */
export type RpcCallRunner = (call: RpcResolvedCall) => unknown;

/**
 * The one hook every call passes through (each batch item, notification, stream, durable run,
 * MCP or tool call): `RpcPipeline.run` hands the call and its runner to the observer, which
 * returns what the runner returns — the handler's value, a Promise of it, or a throw — possibly
 * wrapped (a stream method's rows, to see them end). Implemented by `observability/` (spans,
 * metrics, events, call logs) and handed to the pipeline at bootstrap; when no observer is set
 * the pipeline calls the runner directly, so a disabled observability costs one field check.
 */
export interface RpcCallObserver {
  observe(call: RpcResolvedCall, run: RpcCallRunner): unknown;
}
