import { plainResult } from '../caching/serialized-result.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline, RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike, rowIteratorOf, stopRowIterator } from '../pipeline/stream-source.js';

/**
 * Where a live stream's rows go when its method runs as a tool, and what the call then answers:
 * MCP concatenates text deltas and reports progress (`mcp/mcp-tool-runner.ts`), an LLM tool
 * collects `{ rows }` (`toolset/rpc-toolset.ts`).
 */
export interface MethodToolRows {
  /** Past this many rows the producer is stopped and `value(true)` answers. Default: no bound. */
  readonly maxRows?: number;
  /** One row, before the next is pulled: a returned Promise holds the producer until it settles. */
  add(row: unknown): void | Promise<void>;
  /** The call's value once the rows end (`truncated`: `maxRows` stopped them). */
  value(truncated: boolean): unknown;
  /** Stopping the producer failed (the stop is not waited for). Default: ignored. */
  onStopFailure?(error: unknown): void;
}

/**
 * Runs a resolved call of a method as a tool — the whole pipeline (`RpcPipeline.run`), as every
 * transport does — and settles to the tool's value: a plain method's result (a cached one, which
 * the pipeline hands back as its JSON text, parsed back to a value); a live stream's rows pulled
 * one at a time into `rows` (see `drainRows`); a durable stream's start answer through `durable`.
 * Failures reject as the pipeline threw them: each caller maps them to its own error result.
 */
export async function runMethodTool(pipeline: RpcPipeline, call: RpcResolvedCall, rows: MethodToolRows, durable?: DurableCallStarter): Promise<unknown> {
  const stream = call.definition.stream;
  if (stream?.durable) {
    if (!durable) throw new Error(`"${call.definition.name}" is a durable stream method: it runs as a tool only where durable streams are on`);
    return durable.start(call);
  }
  const value = await pipeline.run(call);
  if (stream) return drainRows(value, call.ctx.signal, rows);
  return plainResult(value);
}

/**
 * Pulls a stream handler's rows at the consumer's pace: each goes to `rows.add` (awaited) before
 * the next is pulled, until the rows end, `rows.maxRows` is passed or `signal` aborts (it throws
 * the abort's reason). A producer not run to its end is stopped (its `finally` blocks run).
 */
export async function drainRows(handlerValue: unknown, signal: AbortSignal, rows: MethodToolRows): Promise<unknown> {
  const iterator = rowIteratorOf(handlerValue);
  const maxRows = rows.maxRows ?? Infinity;
  let count = 0;
  let exhausted = false;
  try {
    for (;;) {
      signal.throwIfAborted();
      const step = await iterator.next();
      if (step.done) {
        exhausted = true;
        return rows.value(false);
      }
      if (count === maxRows) return rows.value(true);
      count++;
      const added = rows.add(step.value);
      if (isPromiseLike(added)) await added;
    }
  } finally {
    if (!exhausted) stopRowIterator(iterator, (error) => rows.onStopFailure?.(error));
  }
}
