import { HttpException, HttpStatus } from '@nestjs/common';
import { RpcErrorCode, type RpcErrorObject, type RpcId, type RpcParamsValue } from '@nest-jsonrpc/protocol';
import type { RpcHttpExchange } from '../context/rpc-context.js';
import type { RpcExceptionMapper } from '../errors/rpc-exception-mapper.js';
import { RpcException } from '../errors/rpc-exceptions.js';
import { runMethodTool, type MethodToolRows } from '../method-tools/index.js';
import type { McpFormatName } from '../options/mcp-options.js';
import type { DurableCallStarter } from '../pipeline/durable-call-starter.js';
import type { RpcPipeline } from '../pipeline/rpc-pipeline.js';
import type { McpCallDenial } from './auth/mcp-resource-server.js';
import type { McpToolEntry } from './mcp-tool-catalog.js';
import { renderToolErrorText, renderToolText } from './tool-text.js';

/** The `_meta` key of an error result's error object (`{ code, message, data? }`). */
export const MCP_ERROR_META_KEY = 'nest-jsonrpc/error';

const CLIENT_GONE: RpcErrorObject = Object.freeze({ code: RpcErrorCode.InternalError, message: 'Internal error' });

/** What a tool call answers (MCP's `CallToolResult`, and the body of `POST <path>/call`). */
export interface McpToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  /** Index signature: the SDK's result type is open. */
  [key: string]: unknown;
}

/** A tool call's result, and how the app's code refused it when it did (for the OAuth challenges). */
export interface McpToolOutcome {
  readonly result: McpToolResult;
  /** A guard threw `UnauthorizedException` (`unauthorized`) or `ForbiddenException`, or the call failed with -32001 (`forbidden`). */
  readonly denial?: McpCallDenial;
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
    return (await this.run(entry, args, exchange, options)).result;
  }

  /** `call`, telling also whether the app's code refused the caller (a route may answer a challenge instead). */
  async run(entry: McpToolEntry, args: unknown, exchange: RpcHttpExchange, options: McpToolCallOptions): Promise<McpToolOutcome> {
    const method = entry.definition.name;
    const call = this.pipeline.callOf(method, args as RpcParamsValue | undefined, exchange, 'mcp', { id: options.id ?? null });
    if (!call) return { result: this.failure({ code: RpcErrorCode.MethodNotFound, message: 'Method not found' }) };
    try {
      const value = await runMethodTool(this.pipeline, call, aggregatedRows(options.onRow), this.durable);
      return { result: this.success(entry, value, options.format) };
    } catch (error) {
      // The client left mid-stream: nobody reads the answer, and its abort is no server error to log.
      if (call.ctx.signal.aborted && !(error instanceof RpcException)) return { result: this.failure(CLIENT_GONE) };
      return this.refusal(error, method);
    }
  }

  /** The result of a call of `method` that threw `error`, and whether the throw refused the caller. */
  refusal(error: unknown, method: string): McpToolOutcome {
    const object = this.mapper.toErrorObject(error, method);
    const denial = denialOf(error, object);
    return { result: this.failure(object), ...(denial && { denial }) };
  }

  /** What a call of `entry` that produced `value` answers (also a finished task's result). */
  success(entry: McpToolEntry, value: unknown, format: McpFormatName): McpToolResult {
    const result: McpToolResult = { content: [{ type: 'text', text: renderToolText(value, format) }] };
    if (entry.structured && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      result.structuredContent = value as Record<string, unknown>;
    }
    return result;
  }

  /**
   * An error result never carries `structuredContent`: a client that listed the tools validates
   * `structuredContent` against the tool's `outputSchema` (SDK 1.x, the Inspector) and would throw
   * a schema mismatch instead of showing the error. The error object travels in `_meta` under
   * `MCP_ERROR_META_KEY`, where no schema applies, for clients that want the code.
   */
  failure(error: RpcErrorObject): McpToolResult {
    return {
      content: [{ type: 'text', text: renderToolErrorText(error) }],
      isError: true,
      _meta: { [MCP_ERROR_META_KEY]: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) } },
    };
  }
}

/** How the app refused the caller, when the error says so. */
function denialOf(error: unknown, object: RpcErrorObject): McpCallDenial | undefined {
  if (error instanceof HttpException) {
    const status = error.getStatus();
    if (status === HttpStatus.UNAUTHORIZED) return 'unauthorized';
    if (status === HttpStatus.FORBIDDEN) return 'forbidden';
  }
  return object.code === RpcErrorCode.AccessDenied ? 'forbidden' : undefined;
}

/**
 * A live stream's rows as one tool result (`McpRowAggregate`), each row reported to `onRow` (one
 * progress notification) before the next is pulled.
 */
function aggregatedRows(onRow: McpRowListener | undefined): MethodToolRows {
  const aggregate = new McpRowAggregate();
  return {
    add: (row) => {
      const delta = aggregate.add(row);
      return onRow?.(aggregate.count, delta);
    },
    value: () => aggregate.value,
  };
}

/**
 * A stream's rows as one tool result: the rows' text deltas concatenated when any row has one
 * (an LLM reply reads as one text), else the rows as a list. Also a finished task's result.
 */
export class McpRowAggregate {
  private readonly rows: unknown[] = [];
  private text: string | undefined;

  /** Adds a row; returns its text delta, when it has one. */
  add(row: unknown): string | undefined {
    this.rows.push(row);
    const delta = textDeltaOf(row);
    if (delta !== undefined) this.text = (this.text ?? '') + delta;
    return delta;
  }

  get count(): number {
    return this.rows.length;
  }

  get value(): unknown {
    return this.text ?? this.rows;
  }
}

/** A row's text: a string row, or a `delta` string (`{ delta }`, `{ type: 'text', delta }`). */
export function textDeltaOf(row: unknown): string | undefined {
  if (typeof row === 'string') return row;
  if (row === null || typeof row !== 'object') return undefined;
  const { delta, type } = row as { delta?: unknown; type?: unknown };
  return typeof delta === 'string' && (type === undefined || type === 'text') ? delta : undefined;
}
