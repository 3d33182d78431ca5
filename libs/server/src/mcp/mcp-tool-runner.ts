import { RpcErrorCode, type RpcErrorObject, type RpcId, type RpcParamsValue } from '@nest-jsonrpc/protocol';
import { RpcSerializedResult } from '../caching/serialized-result.js';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcException } from '../errors/rpc-exceptions.js';
import type { McpFormatName } from '../options/mcp-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline, RpcResolvedCall } from '../pipeline/rpc-pipeline.js';
import { isPromiseLike, rowIteratorOf, stopRowIterator, unboxStreamSource } from '../pipeline/stream-source.js';
import type { McpToolEntry } from './mcp-tool-catalog.js';
import { renderToolErrorText, renderToolText } from './tool-text.js';

const CLIENT_GONE: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InternalError, message: 'Internal error' });

/** What a tool call answers (MCP's `CallToolResult`, and the body of `POST <path>/call`). */
export interface McpToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Index signature: the SDK's result type is open. */
  [key: string]: unknown;
}

/** One stream row as it reaches the caller: `message` is its text delta, when it has one. */
export type McpRowListener = (progress: number, message: string | undefined) => void | Promise<void>;

export interface McpToolCallOptions {
  /** The text block's format. */
  format: McpFormatName;
  /** The MCP request id (the call's `ctx.id`). */
  id?: RpcId;
  /** Called once per stream row (the caller sent a `progressToken`). */
  onRow?: McpRowListener;
}

/**
 * Runs one tool call through the whole pipeline (`transport: 'mcp'`): the app's guards, roles,
 * rate limits, cache, interceptors, pipes, params and the handler, exactly as on `/rpc`. Plain
 * methods answer their value; live stream methods are drained into one aggregate; durable ones
 * answer their handle. Never throws: failures become `isError` results.
 */
export class McpToolRunner {
  constructor(
    private readonly pipeline: RpcPipeline,
    private readonly mapper: RpcExceptionMapper,
    private readonly durable: DurableCallStarter | undefined,
  ) {}

  async call(entry: McpToolEntry, args: unknown, exchange: RpcHttpExchange, options: McpToolCallOptions): Promise<McpToolResult> {
    const method = entry.definition.name;
    const call = this.pipeline.callOf(method, args as RpcParamsValue | undefined, exchange, 'mcp', { id: options.id ?? null });
    if (!call) return this.failure({ code: RpcErrorCode.MethodNotFound, message: 'Method not found' });
    try {
      const value = await this.valueOf(call, entry, options.onRow);
      // A cached result comes back as its JSON text (what /rpc splices into the envelope).
      return this.success(entry, value instanceof RpcSerializedResult ? JSON.parse(value.json) : value, options.format);
    } catch (error) {
      // The client left mid-stream: nobody reads the answer, and its abort is no server error to log.
      if (call.ctx.signal.aborted && !(error instanceof RpcException)) return this.failure(CLIENT_GONE);
      return this.failure(this.mapper.toErrorObject(error, method));
    }
  }

  private valueOf(call: RpcResolvedCall, entry: McpToolEntry, onRow: McpRowListener | undefined): unknown {
    const stream = entry.definition.stream;
    if (!stream) return this.pipeline.run(call);
    if (stream.durable) return this.durable!.start(call);
    const value = this.pipeline.run(call);
    return isPromiseLike(value) ? value.then((v) => drain(v, call, onRow)) : drain(value, call, onRow);
  }

  private success(entry: McpToolEntry, value: unknown, format: McpFormatName): McpToolResult {
    const result: McpToolResult = { content: [{ type: 'text', text: renderToolText(value, format) }] };
    if (entry.structured && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      result.structuredContent = value as Record<string, unknown>;
    }
    return result;
  }

  private failure(error: RpcErrorObject): McpToolResult {
    return {
      content: [{ type: 'text', text: renderToolErrorText(error) }],
      structuredContent: { error: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) } },
      isError: true,
    };
  }
}

/**
 * Pulls every row of a live stream. Each row goes to `onRow` (one progress notification) before
 * the next is pulled; the aggregate is the rows' text deltas concatenated when any row has one,
 * else the rows. A client that leaves aborts `ctx.signal` and stops the producer.
 */
async function drain(handlerValue: unknown, call: RpcResolvedCall, onRow: McpRowListener | undefined): Promise<unknown> {
  const iterator = rowIteratorOf(unboxStreamSource(handlerValue));
  const signal = call.ctx.signal;
  const rows: unknown[] = [];
  let text: string | undefined;
  let finished = false;
  try {
    for (;;) {
      signal.throwIfAborted();
      const step = await iterator.next();
      if (step.done) break;
      rows.push(step.value);
      const delta = textDeltaOf(step.value);
      if (delta !== undefined) text = (text ?? '') + delta;
      if (onRow) await onRow(rows.length, delta);
    }
    finished = true;
  } finally {
    if (!finished) stopRowIterator(iterator, () => undefined);
  }
  return text ?? rows;
}

/** A row's text: a string row, or a `delta` string (`{ delta }`, `{ type: 'text', delta }`). */
export function textDeltaOf(row: unknown): string | undefined {
  if (typeof row === 'string') return row;
  if (row === null || typeof row !== 'object') return undefined;
  const { delta, type } = row as { delta?: unknown; type?: unknown };
  return typeof delta === 'string' && (type === undefined || type === 'text') ? delta : undefined;
}
